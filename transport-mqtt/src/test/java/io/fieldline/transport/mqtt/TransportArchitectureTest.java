package io.fieldline.transport.mqtt;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: the transport knows only {@code common} and Netty; its feature packages form a
 * DAG. The packages are the message path: the root package (server, channel initializer, the
 * per-channel dispatcher) uses the features {@code connect}, {@code publish} and {@code subscribe},
 * which never use each other; all of them build on {@code session}, {@code ack}, {@code pipeline}
 * and {@code downlink} (what is sent to the device), which use no feature.
 *
 * <p>Plain JUnit tests calling {@code check} rather than {@code @ArchTest} fields: with Surefire
 * 3.5.3 {@code @ArchTest} fields are silently not run (TNG/ArchUnit#1442), a test that cannot fail.
 */
class TransportArchitectureTest {

  private static final String ROOT = "io.fieldline.transport.mqtt";
  private static final List<String> FEATURES = List.of("connect", "publish", "subscribe");
  private static final List<String> SHARED = List.of("session", "ack", "pipeline", "downlink");

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  @Test
  void should_import_the_transport_classes_when_analysed() {
    for (String feature : FEATURES) {
      assertThat(CLASSES.containPackage(ROOT + "." + feature)).as(feature).isTrue();
    }
    for (String shared : SHARED) {
      assertThat(CLASSES.containPackage(ROOT + "." + shared)).as(shared).isTrue();
    }
    assertThat(CLASSES.contain(MqttServer.class)).isTrue();
    assertThat(CLASSES.contain(MqttSessionHandler.class)).isTrue();
  }

  @Test
  void should_not_depend_on_pekko_or_cassandra_driver() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + "..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("org.apache.pekko..", "com.datastax..", "org.apache.cassandra..")
        .check(CLASSES);
  }

  @Test
  void should_not_depend_on_the_http_transport_when_compiled() {
    // Side by side over transport-common: what both use lives there.
    noClasses()
        .that()
        .resideInAPackage(ROOT + "..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.fieldline.transport.http..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_subpackages() {
    slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(CLASSES);
  }

  @Test
  void should_keep_connect_publish_and_subscribe_independent_of_each_other() {
    for (String feature : FEATURES) {
      String[] others =
          FEATURES.stream()
              .filter(other -> !other.equals(feature))
              .map(other -> ROOT + "." + other + "..")
              .toArray(String[]::new);
      noClasses()
          .that()
          .resideInAPackage(ROOT + "." + feature + "..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(others)
          .because("the features meet only in the dispatcher, MqttSessionHandler")
          .check(CLASSES);
    }
  }

  @Test
  void should_keep_session_ack_and_pipeline_free_of_the_features() {
    String[] features = FEATURES.stream().map(f -> ROOT + "." + f + "..").toArray(String[]::new);
    for (String shared : SHARED) {
      noClasses()
          .that()
          .resideInAPackage(ROOT + "." + shared + "..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(features)
          .check(CLASSES);
    }
  }

  @Test
  void should_use_only_settings_and_meters_from_the_root_package_in_subpackages() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + ".(*)..")
        .should()
        .dependOnClassesThat(
            resideInAPackage(ROOT)
                .and(
                    not(
                        belongToAnyOf(
                            MqttTransportConfig.class,
                            MqttMetrics.class,
                            // The fleet services a session context carries.
                            DeviceServices.class))))
        .because("the server, its channel initializer and the dispatcher sit above every feature")
        .check(CLASSES);
  }
}
