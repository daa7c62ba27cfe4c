package io.fieldline.cassandra.embedded;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;

@AnalyzeClasses(
    packages = "io.fieldline.cassandra.embedded",
    importOptions = ImportOption.DoNotIncludeTests.class)
class LauncherArchitectureTest {

  // A method, not a static ArchRule field: with Surefire 3.5.3 a field rule is reported as
  // "Tests run: 0" and its violations never fail the build.

  /** Cassandra runs in a child JVM; this JVM only launches it and speaks TCP to it. */
  @ArchTest
  void should_not_use_cassandra_or_driver_classes_when_launching(JavaClasses classes) {
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("org.apache.cassandra..", "com.datastax..")
        .check(classes);
  }
}
