package io.fieldline.actors;

import static io.fieldline.actors.TestMessages.actorsConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ActorsConfigTest {

  @Test
  void should_read_the_documented_defaults_when_only_reference_conf_is_present() {
    ActorsConfig config = actorsConfig("");

    assertThat(config)
        .isEqualTo(
            new ActorsConfig(
                4,
                Duration.ofSeconds(15),
                64,
                1024,
                Duration.ofMinutes(2),
                Duration.ofSeconds(30)));
  }

  @Test
  void should_read_overrides_when_keys_are_set() {
    ActorsConfig config =
        actorsConfig(
            "fieldline.actors { shards = 8, ack-timeout = 2s, max-inflight-writes = 16,"
                + " stash-capacity = 100, passivate-after = 10 minutes, shutdown-timeout = 1s }");

    assertThat(config)
        .isEqualTo(
            new ActorsConfig(
                8, Duration.ofSeconds(2), 16, 100, Duration.ofMinutes(10), Duration.ofSeconds(1)));
  }

  @Test
  void should_list_every_invalid_key_when_several_are_wrong() {
    assertThatThrownBy(
            () ->
                actorsConfig(
                    "fieldline.actors { shards = 0, ack-timeout = -1s, max-inflight-writes = many,"
                        + " stash-capacity = 0, passivate-after = 0s, shutdown-timeout = soon }"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fieldline.actors.shards: must be 1..1024, got 0")
        .hasMessageContaining("fieldline.actors.ack-timeout: must be a positive duration")
        .hasMessageContaining("fieldline.actors.max-inflight-writes: ")
        .hasMessageContaining("fieldline.actors.stash-capacity: must be 1..1048576, got 0")
        .hasMessageContaining("fieldline.actors.passivate-after: must be a positive duration")
        .hasMessageContaining("fieldline.actors.shutdown-timeout: ")
        .satisfies(e -> assertThat(e.getMessage().split("\n  ")).hasSize(7));
  }

  @Test
  void should_fail_with_the_path_when_the_subtree_is_missing() {
    assertThatThrownBy(() -> ActorsConfig.from(ConfigFactory.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fieldline.actors");
  }

  @Test
  void should_take_every_key_from_its_environment_variable_when_set() {
    Config reference = ConfigFactory.parseURL(ActorsConfig.class.getResource("/reference.conf"));
    Config environment =
        ConfigFactory.parseMap(
            Map.of(
                "FIELDLINE_ACTORS_SHARDS", "7",
                "FIELDLINE_ACTORS_ACK_TIMEOUT", "3s",
                "FIELDLINE_ACTORS_MAX_INFLIGHT_WRITES", "5",
                "FIELDLINE_ACTORS_STASH_CAPACITY", "6",
                "FIELDLINE_ACTORS_PASSIVATE_AFTER", "4s",
                "FIELDLINE_ACTORS_SHUTDOWN_TIMEOUT", "2s"));

    ActorsConfig config = ActorsConfig.from(environment.withFallback(reference).resolve());

    assertThat(config)
        .isEqualTo(
            new ActorsConfig(
                7, Duration.ofSeconds(3), 5, 6, Duration.ofSeconds(4), Duration.ofSeconds(2)));
    assertThat(reference.getConfig(ActorsConfig.PATH).root().keySet())
        .as("every key has an environment variable above")
        .hasSize(6);
  }
}
