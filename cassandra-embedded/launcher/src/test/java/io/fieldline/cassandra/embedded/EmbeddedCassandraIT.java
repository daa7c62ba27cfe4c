package io.fieldline.cassandra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedCassandraIT {

  @TempDir Path tmp;

  private static CqlSession connect(EmbeddedCassandra cassandra) {
    return CqlSession.builder()
        .addContactPoint(cassandra.cqlAddress())
        .withLocalDatacenter(cassandra.localDatacenter())
        .withConfigLoader(
            DriverConfigLoader.programmaticBuilder()
                // DDL and the first queries are slow on a busy 2-core build machine.
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .build())
        .build();
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  @Test
  void should_answer_cql_and_keep_rows_when_killed_and_restarted() {
    EmbeddedCassandra cassandra = SharedCassandra.get();
    InetSocketAddress address = cassandra.cqlAddress();
    long firstPid = cassandra.pid();
    try (CqlSession session = connect(cassandra)) {
      Row version = session.execute("SELECT release_version FROM system.local").one();
      assertThat(version).isNotNull();
      assertThat(version.getString("release_version")).startsWith("5.0.");
      session.execute(
          "CREATE KEYSPACE IF NOT EXISTS launcher_it WITH replication ="
              + " {'class': 'SimpleStrategy', 'replication_factor': 1}");
      session.execute("CREATE TABLE IF NOT EXISTS launcher_it.kv (k text PRIMARY KEY, v int)");
      session.execute("INSERT INTO launcher_it.kv (k, v) VALUES ('written-before-kill', 42)");
    }

    cassandra.kill();

    assertThat(cassandra.isRunning()).isFalse();
    assertThat(alive(firstPid)).isFalse();

    // Nothing was flushed: the row and the schema come back by commit-log replay.
    EmbeddedCassandra restarted = SharedCassandra.get();

    assertThat(restarted).isSameAs(cassandra);
    assertThat(restarted.isRunning()).isTrue();
    assertThat(restarted.pid()).isNotEqualTo(firstPid);
    assertThat(restarted.cqlAddress()).isEqualTo(address);
    try (CqlSession session = connect(restarted)) {
      Row row =
          session.execute("SELECT v FROM launcher_it.kv WHERE k = 'written-before-kill'").one();
      assertThat(row).isNotNull();
      assertThat(row.getInt("v")).isEqualTo(42);
    }
  }

  @Test
  void should_run_every_thread_of_the_node_with_the_configured_timer_slack() throws IOException {
    EmbeddedCassandra cassandra = SharedCassandra.get();
    long nanos = EmbeddedCassandraConfig.DEFAULT_TIMER_SLACK.toNanos();

    List<String> slacks;
    try (Stream<Path> threads = Files.list(Path.of("/proc/" + cassandra.pid() + "/task"))) {
      // A thread's own directory also exists at /proc/<tid>, where the slack file lives.
      slacks =
          threads
              .map(task -> Path.of("/proc", task.getFileName().toString(), "timerslack_ns"))
              .filter(Files::exists)
              .map(EmbeddedCassandraIT::readStripped)
              .toList();
    }

    assertThat(slacks).hasSizeGreaterThan(20).containsOnly(Long.toString(nanos));
  }

  private static String readStripped(Path file) {
    try {
      return Files.readString(file).strip();
    } catch (IOException e) {
      return "unreadable: " + e;
    }
  }

  @Test
  void should_kill_leftover_node_when_a_new_owner_starts_in_the_same_work_dir() {
    EmbeddedCassandraConfig config =
        EmbeddedCassandraConfig.defaults(tmp.resolve("node"), Profile.TEST);
    // The first owner "dies": it never stops its node, as a test JVM killed with -9 would.
    EmbeddedCassandra abandoned = EmbeddedCassandra.create(config);
    abandoned.start();
    long abandonedPid = abandoned.pid();
    try (EmbeddedCassandra successor = EmbeddedCassandra.create(config)) {

      successor.start();

      assertThat(alive(abandonedPid)).isFalse();
      assertThat(successor.isRunning()).isTrue();
      assertThat(successor.pid()).isNotEqualTo(abandonedPid);
      assertThat(tmp.resolve("node/cassandra.pid"))
          .content()
          .isEqualToIgnoringWhitespace(Long.toString(successor.pid()));

      successor.stop();

      assertThat(successor.isRunning()).isFalse();
      assertThat(alive(successor.pid())).isFalse();
      assertThat(tmp.resolve("node/cassandra.pid")).doesNotExist();
    } finally {
      abandoned.kill();
    }
  }

  @Test
  void should_fail_with_the_log_tail_when_cassandra_rejects_its_configuration() {
    EmbeddedCassandra broken =
        EmbeddedCassandra.create(
            EmbeddedCassandraConfig.defaults(tmp.resolve("broken"), Profile.TEST)
                .withExtraYaml("num_tokens", "banana"));

    assertThatThrownBy(broken::start)
        .isInstanceOf(EmbeddedCassandraException.class)
        .hasMessageContaining("exited with code")
        .hasMessageContaining("system.log")
        .hasMessageContaining("num_tokens");
    assertThat(broken.isRunning()).isFalse();
    assertThat(tmp.resolve("broken/cassandra.pid")).doesNotExist();
  }
}
