package io.fieldline.transport.mqtt;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: the transport knows only {@code common} and Netty; its feature packages form a
 * DAG.
 *
 * <p>Plain JUnit tests calling {@code check} rather than {@code @ArchTest} fields: with Surefire
 * 3.5.3 {@code @ArchTest} fields are silently not run (TNG/ArchUnit#1442), a test that cannot fail.
 */
class TransportArchitectureTest {

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.fieldline.transport.mqtt");

  @Test
  void should_import_the_transport_classes_when_analysed() {
    assertThat(CLASSES.containPackage("io.fieldline.transport.mqtt.session")).isTrue();
    assertThat(CLASSES.contain(MqttServer.class)).isTrue();
  }

  @Test
  void should_not_depend_on_pekko_or_cassandra_driver() {
    noClasses()
        .that()
        .resideInAPackage("io.fieldline.transport.mqtt..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("org.apache.pekko..", "com.datastax..", "org.apache.cassandra..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_subpackages() {
    slices().matching("io.fieldline.transport.mqtt.(*)..").should().beFreeOfCycles().check(CLASSES);
  }
}
