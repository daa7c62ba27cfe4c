package io.fieldline.dao.cassandra;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

class ArchitectureTest {

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.fieldline.dao.cassandra");

  @Test
  void should_have_no_package_cycles_when_sliced_by_package() {
    slices().matching("io.fieldline.dao.cassandra.(**)").should().beFreeOfCycles().check(CLASSES);
  }

  @Test
  void should_keep_internals_independent_of_the_public_api_when_layered() {
    noClasses()
        .that()
        .resideInAPackage("..dao.cassandra.internal..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.fieldline.dao.cassandra")
        .check(CLASSES);
  }

  @Test
  void should_not_import_netty_or_pekko_when_storage_code() {
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.netty..", "org.apache.pekko..", "org.apache.cassandra..")
        .check(CLASSES);
  }
}
