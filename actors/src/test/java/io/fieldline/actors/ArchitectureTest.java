package io.fieldline.actors;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The module's place in ARCHITECTURE.md: Pekko and common, never Netty or the Cassandra driver. */
class ArchitectureTest {

  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.fieldline");
    // Guards against a vacuous pass: the rules below must see this module's classes.
    assertThat(classes.contain(LocalDeviceInbox.class)).isTrue();
    assertThat(classes.contain(io.fieldline.common.port.DeviceInbox.class)).isTrue();
  }

  @Test
  void should_not_depend_on_netty_or_the_cassandra_driver_when_compiled() {
    noClasses()
        .that()
        .resideInAPackage("io.fieldline.actors..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.netty..", "com.datastax..", "org.apache.cassandra..")
        .check(classes);
  }

  @Test
  void should_have_no_package_cycles_when_compiled() {
    slices().matching("io.fieldline.(**)").should().beFreeOfCycles().check(classes);
  }
}
