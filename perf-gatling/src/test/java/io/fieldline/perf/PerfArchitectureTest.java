package io.fieldline.perf;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.fieldline.perf.mqtt.MqttDsl;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: perf-gatling drives the server from outside (MQTT, REST, CQL for checks), never
 * through its code; the load path (the MQTT protocol) touches only Gatling and Netty.
 *
 * <p>Plain tests calling {@code check}: {@code @ArchTest} fields are not run by Surefire 3.5.3.
 */
class PerfArchitectureTest {

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.fieldline.perf");

  @Test
  void should_import_the_perf_classes_when_analysed() {
    assertThat(CLASSES.contain(MqttDsl.class)).isTrue();
    assertThat(CLASSES.containPackage("io.fieldline.perf.verify")).isTrue();
  }

  @Test
  void should_not_use_server_code_when_driving_it() {
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fieldline.server..",
            "io.fieldline.transport..",
            "io.fieldline.actors..",
            "io.fieldline.dao..",
            "io.fieldline.common..",
            "org.apache.pekko..")
        .check(CLASSES);
  }

  @Test
  void should_keep_the_cassandra_driver_out_of_the_load_path() {
    noClasses()
        .that()
        .resideInAnyPackage("io.fieldline.perf.mqtt..", "io.fieldline.perf.telemetry..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("com.datastax..", "org.apache.cassandra..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_subpackages() {
    slices().matching("io.fieldline.perf.(*)..").should().beFreeOfCycles().check(CLASSES);
  }
}
