package io.fieldline.cluster;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: the cluster knows {@code common}, Curator and gRPC; nothing of Pekko, the
 * Cassandra driver, or unshaded Netty; its feature packages form a DAG, only {@code membership}
 * knows ZooKeeper, and only the root package's {@link ClusterNode} wires them together.
 *
 * <p>Plain JUnit tests calling {@code check} rather than {@code @ArchTest} fields: with Surefire
 * 3.5.3 {@code @ArchTest} fields are silently not run, a test that cannot fail.
 */
class ClusterArchitectureTest {

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.fieldline.cluster");

  @Test
  void should_import_the_cluster_classes_when_analysed() {
    assertThat(CLASSES.contain(ClusterNode.class)).isTrue();
    assertThat(CLASSES.containPackage("io.fieldline.cluster.forward")).isTrue();
    assertThat(CLASSES.containPackage("io.fieldline.cluster.membership")).isTrue();
    assertThat(CLASSES.containPackage("io.fieldline.cluster.ring")).isTrue();
    assertThat(CLASSES.containPackage("io.fieldline.cluster.takeover")).isTrue();
    assertThat(CLASSES.containPackage("io.fieldline.cluster.revocation")).isTrue();
    assertThat(CLASSES.containPackage("io.fieldline.cluster.events")).isTrue();
  }

  @Test
  void should_not_depend_on_pekko_cassandra_or_unshaded_netty() {
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.apache.pekko..",
            "com.datastax..",
            "org.apache.cassandra..",
            "io.netty..",
            "io.fieldline.actors..",
            "io.fieldline.transport..",
            "io.fieldline.dao..",
            "io.fieldline.server..")
        .check(CLASSES);
  }

  @Test
  void should_keep_curator_inside_the_membership_package() {
    noClasses()
        .that()
        .resideOutsideOfPackage("io.fieldline.cluster.membership..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("org.apache.curator..", "org.apache.zookeeper..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_subpackages() {
    slices().matching("io.fieldline.cluster.(*)..").should().beFreeOfCycles().check(CLASSES);
  }

  @Test
  void should_not_know_membership_when_forwarding_taking_over_revoking_or_publishing() {
    noClasses()
        .that()
        .resideInAnyPackage(
            "io.fieldline.cluster.forward..",
            "io.fieldline.cluster.peer..",
            "io.fieldline.cluster.takeover..",
            "io.fieldline.cluster.revocation..",
            "io.fieldline.cluster.events..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.fieldline.cluster.membership..")
        .check(CLASSES);
  }

  @Test
  void should_leave_the_wiring_to_the_cluster_node_when_in_a_feature_package() {
    noClasses()
        .that()
        .resideOutsideOfPackage("io.fieldline.cluster")
        .should()
        .dependOnClassesThat()
        .belongToAnyOf(ClusterNode.class)
        .check(CLASSES);
  }
}
