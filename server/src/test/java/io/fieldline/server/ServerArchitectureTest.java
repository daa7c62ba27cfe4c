package io.fieldline.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.fieldline.server.rest.RestApi;
import io.fieldline.transport.http.HttpErrors;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import org.junit.jupiter.api.Test;

/**
 * The boundaries between modules that the Maven graph cannot hold, checked on the whole server's
 * classes (every module is on this module's classpath): the REST API reads through the ports in
 * {@code common} only; nothing outside {@code dao-cassandra} reaches past its entry point; other
 * modules use only the root package of the actors, the transports (plus the MQTT transport's {@code
 * SessionRegistry}) and the cluster; no module uses another module's {@code internal} packages.
 * Plain tests calling {@code check}: {@code @ArchTest} fields are not run by Surefire 3.5.3.
 */
class ServerArchitectureTest {

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.fieldline");

  /** A class of a module's root package {@code root} or of any package below it. */
  private static DescribedPredicate<JavaClass> insideModuleBelowRoot(String root) {
    return DescribedPredicate.describe(
        "a class in a package below " + root, c -> c.getPackageName().startsWith(root + "."));
  }

  @Test
  void should_read_storage_through_common_ports_only_when_serving_rest() {
    assertThat(CLASSES.contain(RestApi.class)).isTrue();
    noClasses()
        .that()
        .resideInAPackage("io.fieldline.server.rest..")
        .should()
        .dependOnClassesThat(
            JavaClass.Predicates.resideInAnyPackage(
                    "io.fieldline.dao..",
                    "io.fieldline.actors..",
                    "io.fieldline.transport..",
                    "io.fieldline.cluster..",
                    "com.datastax..",
                    "org.apache.cassandra..",
                    "io.netty..")
                // The ThingsBoard payload parser the device transports share: REST attribute
                // writes take the same JSON as devices send (it reads no storage).
                .and(
                    DescribedPredicate.not(
                        JavaClass.Predicates.resideInAPackage(
                            "io.fieldline.transport.common.payload..")))
                // ThingsBoard's error answers, the same for REST and the HTTP device API.
                .and(DescribedPredicate.not(JavaClass.Predicates.belongToAnyOf(HttpErrors.class))))
        .check(CLASSES);
  }

  @Test
  void should_build_storage_through_its_entry_point_only_when_outside_dao_cassandra() {
    assertThat(CLASSES.contain(CassandraStorage.class)).isTrue();
    noClasses()
        .that()
        .resideOutsideOfPackage("io.fieldline.dao.cassandra..")
        .should()
        .dependOnClassesThat(insideModuleBelowRoot("io.fieldline.dao.cassandra"))
        .check(CLASSES);
  }

  @Test
  void should_use_only_the_root_package_when_using_the_actors_the_transports_or_the_cluster() {
    for (String module :
        new String[] {
          "io.fieldline.actors",
          "io.fieldline.transport.mqtt",
          "io.fieldline.transport.http",
          "io.fieldline.cluster"
        }) {
      noClasses()
          .that()
          .resideOutsideOfPackage(module + "..")
          .should()
          .dependOnClassesThat(
              insideModuleBelowRoot(module)
                  // Built by the composition root before the transport and the cluster, and
                  // handed to both (the cluster sees it as common's SessionCloser).
                  .and(
                      DescribedPredicate.not(
                          JavaClass.Predicates.belongToAnyOf(SessionRegistry.class))))
          .check(CLASSES);
    }
  }

  @Test
  void should_not_use_another_modules_internal_packages() {
    for (String module :
        new String[] {
          "io.fieldline.common",
          "io.fieldline.dao.cassandra",
          "io.fieldline.actors",
          "io.fieldline.transport.mqtt",
          "io.fieldline.transport.http",
          "io.fieldline.cluster",
          "io.fieldline.cassandra.embedded"
        }) {
      noClasses()
          .that()
          .resideOutsideOfPackage(module + "..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage(module + ".internal..")
          .check(CLASSES);
    }
  }

  @Test
  void should_keep_the_transport_and_the_cluster_apart_when_wiring() {
    // They meet through common's ports (DeviceInbox, SessionTakeover, SessionCloser); the
    // composition root hands one to the other.
    noClasses()
        .that()
        .resideInAPackage("io.fieldline.cluster..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.fieldline.transport..", "io.fieldline.actors..")
        .check(CLASSES);
    noClasses()
        .that()
        .resideInAPackage("io.fieldline.transport..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.fieldline.cluster..", "io.fieldline.actors..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_the_servers_packages() {
    // The composition root (the root package) wires every front-end; the front-ends (rest, ws,
    // console, http) form a DAG below it: ws builds on rest (tokens, error answers), never back.
    slices().matching("io.fieldline.server.(*)..").should().beFreeOfCycles().check(CLASSES);
  }
}
