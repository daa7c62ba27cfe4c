package io.fieldline.transport.common;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.pacing.RequestPacer;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.common.rpc.ClientRpcAnswers;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md: what both device transports share sits below them, on common: no transport's
 * classes, no Netty, no Pekko, nothing of Cassandra; its packages form a DAG. Plain tests calling
 * {@code check}: {@code @ArchTest} fields are not run by Surefire 3.5.3.
 */
class TransportCommonArchitectureTest {

  private static final String ROOT = "io.fieldline.transport.common";

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  @Test
  void should_import_every_shared_piece_when_analysed() {
    assertThat(CLASSES.contain(PayloadParser.class)).isTrue();
    assertThat(CLASSES.contain(FirmwareDelivery.class)).isTrue();
    assertThat(CLASSES.contain(ClientRpcAnswers.class)).isTrue();
    assertThat(CLASSES.contain(RequestPacer.class)).isTrue();
  }

  @Test
  void should_depend_on_common_only_when_compiled() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + "..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fieldline.transport.mqtt..",
            "io.fieldline.transport.http..",
            "io.fieldline.actors..",
            "io.fieldline.dao..",
            "io.fieldline.cluster..",
            "io.fieldline.fleet..",
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
