package io.fieldline.common;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.fieldline.common.config.ConfigReader;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: {@code common} is the shared vocabulary and depends on Jackson only (its {@code
 * config} package, the one configuration reader, also on Typesafe Config). Plain tests calling
 * {@code check}: {@code @ArchTest} fields are not run by Surefire 3.5.3.
 */
class CommonArchitectureTest {

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.fieldline.common");

  @Test
  void should_depend_on_no_transport_actor_or_storage_library() {
    assertThat(CLASSES.contain(DeviceId.class)).isTrue();
    noClasses()
        .that()
        .resideOutsideOfPackage("io.fieldline.common.config..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.netty..",
            "org.apache.pekko..",
            "com.datastax..",
            "org.apache.cassandra..",
            "com.typesafe..",
            "io.micrometer..",
            "io.fieldline.transport..",
            "io.fieldline.actors..",
            "io.fieldline.dao..",
            "io.fieldline.server..")
        .check(CLASSES);
  }

  @Test
  void should_read_configuration_through_typesafe_config_only_when_in_the_config_package() {
    assertThat(CLASSES.contain(ConfigReader.class)).isTrue();
    noClasses()
        .that()
        .resideInAPackage("io.fieldline.common.config..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.netty..",
            "org.apache.pekko..",
            "com.datastax..",
            "io.micrometer..",
            "com.fasterxml..",
            "io.fieldline.transport..",
            "io.fieldline.actors..",
            "io.fieldline.dao..",
            "io.fieldline.server..")
        .check(CLASSES);
  }

  @Test
  void should_have_no_cycles_between_its_packages() {
    // The root (identities, the storage failure) depends on no subpackage; the subpackages
    // (kv, credentials, device, query, port, deadletter, ...) must not depend on each other in a
    // circle either.
    noClasses()
        .that()
        .resideInAPackage("io.fieldline.common")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.fieldline.common.(*)..")
        .check(CLASSES);
    slices().matching("io.fieldline.common.(*)..").should().beFreeOfCycles().check(CLASSES);
  }
}
