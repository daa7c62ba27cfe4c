package io.fieldline.transport.http;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: the HTTP device transport sits beside the MQTT transport, over {@code common}
 * and {@code transport-common} only: it never imports the MQTT transport, the server, the actors,
 * the fleet services, the cluster or the storage (a fleet service reaches it through a port in
 * {@code common}); its packages form a DAG. Plain tests calling {@code check}: {@code @ArchTest}
 * fields are not run by Surefire 3.5.3.
 */
class TransportHttpArchitectureTest {

  private static final String ROOT = "io.fieldline.transport.http";

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  @Test
  void should_import_the_device_api_when_analysed() {
    assertThat(CLASSES.contain(DeviceApi.class)).isTrue();
    assertThat(CLASSES.contain(DeviceApiConfig.class)).isTrue();
    assertThat(CLASSES.contain(HttpErrors.class)).isTrue();
    assertThat(CLASSES.contain(ClientConnection.class)).isTrue();
  }

  @Test
  void should_use_only_common_and_transport_common_of_ours_when_compiled() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + "..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fieldline.transport.mqtt..",
            "io.fieldline.server..",
            "io.fieldline.actors..",
            "io.fieldline.fleet..",
            "io.fieldline.cluster..",
            "io.fieldline.dao..",
            "io.fieldline.cassandra..",
            "io.netty.handler.codec.mqtt..",
            "com.datastax..",
            "org.apache.cassandra..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_subpackages() {
    // Today the device API is one package; the rule holds the feature packages it may split into.
    slices()
        .matching(ROOT + ".(*)..")
        .should()
        .beFreeOfCycles()
        .allowEmptyShould(true)
        .check(CLASSES);
  }
}
