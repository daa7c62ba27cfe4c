package io.fieldline.cassandra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EmbeddedCassandraMainTest {

  @Test
  void should_run_server_profile_on_9042_when_nothing_is_given() {
    EmbeddedCassandraConfig config = EmbeddedCassandraMain.parse(new String[0], Map.of());

    assertThat(config.profile()).isEqualTo(Profile.SERVER);
    assertThat(config.cqlPort()).isEqualTo(9042);
    assertThat(config.storagePort()).isZero();
    assertThat(config.workDir()).isEqualTo(Path.of("data/cassandra").toAbsolutePath());
  }

  @Test
  void should_prefer_arguments_over_environment_when_both_are_given() {
    Map<String, String> env =
        Map.of(
            "FIELDLINE_CASSANDRA_WORK_DIR", "/env/dir",
            "FIELDLINE_CASSANDRA_CQL_PORT", "19042",
            "FIELDLINE_CASSANDRA_HEAP", "2G");

    EmbeddedCassandraConfig config =
        EmbeddedCassandraMain.parse(
            new String[] {"--work-dir", "/arg/dir", "--storage-port", "17000", "--profile", "test"},
            env);

    assertThat(config.workDir()).isEqualTo(Path.of("/arg/dir"));
    assertThat(config.cqlPort()).isEqualTo(19042);
    assertThat(config.storagePort()).isEqualTo(17000);
    assertThat(config.heap()).isEqualTo("2G");
    assertThat(config.profile()).isEqualTo(Profile.TEST);
  }

  @Test
  void should_fail_with_usage_when_argument_is_unknown_or_malformed() {
    assertThatThrownBy(() -> EmbeddedCassandraMain.parse(new String[] {"--port", "1"}, Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown arguments [--port, 1]");
    assertThatThrownBy(() -> EmbeddedCassandraMain.parse(new String[] {"--cql-port"}, Map.of()))
        .hasMessageContaining("--cql-port needs a value");
    assertThatThrownBy(
            () -> EmbeddedCassandraMain.parse(new String[] {"--cql-port", "x"}, Map.of()))
        .hasMessageContaining("--cql-port must be a number");
    assertThatThrownBy(() -> EmbeddedCassandraMain.parse(new String[] {"--profile", "x"}, Map.of()))
        .hasMessageContaining("--profile must be SERVER or TEST");
  }
}
