package io.fieldline.fleet;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.fieldline.fleet.live.LiveData;
import io.fieldline.fleet.ota.OtaPackages;
import io.fieldline.fleet.provision.Provisioning;
import io.fieldline.fleet.rpc.RpcService;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: the fleet services sit beside the actors, on common's ports only: no transport,
 * no actor, no storage and no server class, and none of Netty, Pekko or the Cassandra driver. Its
 * feature packages form a DAG. Plain tests calling {@code check}: {@code @ArchTest} fields are not
 * run by Surefire 3.5.3.
 */
class FleetArchitectureTest {

  private static final String ROOT = "io.fieldline.fleet";

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  @Test
  void should_import_every_fleet_service_when_analysed() {
    assertThat(CLASSES.contain(OtaPackages.class)).isTrue();
    assertThat(CLASSES.contain(RpcService.class)).isTrue();
    assertThat(CLASSES.contain(Provisioning.class)).isTrue();
    assertThat(CLASSES.contain(LiveData.class)).isTrue();
  }

  @Test
  void should_depend_on_common_ports_only_when_compiled() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + "..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fieldline.transport..",
            "io.fieldline.actors..",
            "io.fieldline.dao..",
            "io.fieldline.cluster..",
            "io.fieldline.server..",
            "io.netty..",
            "org.apache.pekko..",
            "com.datastax..",
            "org.apache.cassandra..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_subpackages() {
    slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(CLASSES);
  }
}
