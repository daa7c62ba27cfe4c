package io.fieldline.dao.cassandra.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.dao.cassandra.CassandraTestBase;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A migration's data step (the key index backfill of version 2) against a real Cassandra. */
class SchemaDataStepIT extends CassandraTestBase {

  @Test
  void should_leave_the_version_unrecorded_and_run_the_step_again_when_the_step_failed() {
    String fresh = keyspace + "_steps";
    SchemaMigrator migrator = new SchemaMigrator(session, fresh);
    AtomicInteger runs = new AtomicInteger();

    assertThatThrownBy(
            () ->
                migrator.migrate(
                    config.replication(),
                    60,
                    Map.of(
                        KeyIndexBackfill.VERSION,
                        () -> {
                          runs.incrementAndGet();
                          throw new IllegalStateException("page timed out");
                        })))
        .hasMessageContaining("page timed out");
    assertThat(migrator.appliedVersions()).containsExactly(1);

    assertThat(
            migrator.migrate(
                config.replication(), 60, Map.of(KeyIndexBackfill.VERSION, runs::incrementAndGet)))
        .as("the failed version and every later one")
        .containsExactlyElementsOf(
            IntStream.rangeClosed(KeyIndexBackfill.VERSION, SchemaMigrator.latestVersion())
                .boxed()
                .toList());
    assertThat(
            migrator.migrate(
                config.replication(), 60, Map.of(KeyIndexBackfill.VERSION, runs::incrementAndGet)))
        .isEmpty();
    assertThat(runs).as("failed once, completed once, not run once recorded").hasValue(2);
  }
}
