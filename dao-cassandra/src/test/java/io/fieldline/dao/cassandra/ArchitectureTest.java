package io.fieldline.dao.cassandra;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The shape of the module: feature packages below the root ({@code telemetry.write}, {@code
 * telemetry.read}, {@code registry}, {@code deadletter}, {@code schema}) over shared plumbing
 * ({@code cql}), built only by {@link CassandraStorage}.
 */
class ArchitectureTest {

  private static final String ROOT = "io.fieldline.dao.cassandra";

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  @Test
  void should_have_no_package_cycles_when_sliced_by_package() {
    assertThat(CLASSES.containPackage(ROOT + ".telemetry.write")).isTrue();
    slices().matching(ROOT + ".(**)").should().beFreeOfCycles().check(CLASSES);
  }

  @Test
  void should_use_only_the_settings_from_the_root_when_in_a_feature_package() {
    // The root's entry point depends on every feature; features depending back on it (beyond the
    // settings records) would be the cycle the sliced rule above cannot see.
    noClasses()
        .that()
        .resideOutsideOfPackage(ROOT)
        .should()
        .dependOnClassesThat(
            JavaClass.Predicates.resideInAPackage(ROOT)
                .and(
                    DescribedPredicate.not(
                        JavaClass.Predicates.belongToAnyOf(
                            CassandraConfig.class, TsPartitioning.class))))
        .check(CLASSES);
  }

  @Test
  void should_leave_building_the_module_to_the_entry_point_when_in_a_feature_package() {
    noClasses()
        .that()
        .resideOutsideOfPackage(ROOT)
        .should()
        .dependOnClassesThat()
        .belongToAnyOf(CassandraStorage.class)
        .check(CLASSES);
  }

  @Test
  void should_not_know_any_feature_when_shared_cql_plumbing() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + ".cql..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            ROOT + ".telemetry..", ROOT + ".registry..", ROOT + ".deadletter..", ROOT + ".schema..")
        .check(CLASSES);
  }

  @Test
  void should_not_depend_on_the_write_path_when_reading() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + ".telemetry.read..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage(ROOT + ".telemetry.write..")
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
