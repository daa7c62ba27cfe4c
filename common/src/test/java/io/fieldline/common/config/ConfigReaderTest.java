package io.fieldline.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigReaderTest {

  private enum Policy {
    DEAD_LETTER,
    CLOSE
  }

  private record Sample(int port, Duration timeout, long size, Policy policy, String name) {}

  private static Config config(String block) {
    return ConfigFactory.parseString("x.y {" + block + "}").resolve();
  }

  private static Sample read(Config root) {
    ConfigReader r = ConfigReader.of(root, "x.y");
    Sample sample =
        new Sample(
            r.integer("port", 0, 65535),
            r.positiveDuration("timeout"),
            r.bytes("size", 64, 1024),
            r.oneOf("policy", Policy.class),
            r.nonBlankString("name"));
    r.check(!sample.name().equals("forbidden"), "name", "must not be forbidden");
    return r.validated(sample);
  }

  @Test
  void should_return_the_values_when_every_key_is_valid() {
    Sample sample =
        read(
            config(
                "port = 1883, timeout = 10s, size = 1 KiB, policy = dead-letter, name = \" a \""));

    assertThat(sample)
        .isEqualTo(new Sample(1883, Duration.ofSeconds(10), 1024, Policy.DEAD_LETTER, " a "));
  }

  @Test
  void should_list_every_problem_with_its_full_path_when_several_keys_are_bad() {
    assertThatThrownBy(
            () ->
                read(
                    config("port = 70000, timeout = 0s, size = 4 GiB, policy = drop, name = \"\"")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll(
            "invalid x.y configuration",
            "x.y.port: must be 0..65535, got 70000",
            "x.y.timeout: must be a positive duration",
            "x.y.size: must be 64..1024 bytes, got 4294967296",
            "x.y.policy: must be one of dead-letter, close, got 'drop'",
            "x.y.name: must not be empty");
  }

  @Test
  void should_report_an_unreadable_key_once_when_it_has_the_wrong_type() {
    assertThatThrownBy(
            () -> read(config("port = eighty, timeout = 1s, size = 100, policy = close, name = n")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("x.y.port: ")
        .hasMessageNotContaining("must be 0..65535");
  }

  @Test
  void should_report_missing_keys_when_the_block_is_incomplete() {
    assertThatThrownBy(() -> read(config("port = 1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll("x.y.timeout: ", "x.y.size: ", "x.y.policy: ", "x.y.name: ");
  }

  @Test
  void should_report_the_block_when_it_is_missing() {
    assertThatThrownBy(() -> read(ConfigFactory.parseString("other = 1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("x.y: ");
  }

  @Test
  void should_apply_module_rules_when_the_value_was_readable() {
    assertThatThrownBy(
            () ->
                read(
                    config("port = 1, timeout = 1s, size = 100, policy = close, name = forbidden")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("x.y.name: must not be forbidden");
  }

  @Test
  void should_skip_a_cross_key_rule_when_a_key_it_reads_is_unreadable() {
    ConfigReader r = ConfigReader.of(config("max = many, low = 50"), "x.y");
    int max = r.integer("max", 1, 100);
    int low = r.integer("low", 0, 100);
    r.check(low < max, "low", "must be below max", "max");

    assertThatThrownBy(() -> r.validated(low))
        .hasMessageContaining("x.y.max: ")
        .hasMessageNotContaining("must be below max");
  }

  @Test
  void should_return_a_non_blank_string_as_written_when_it_has_spaces() {
    ConfigReader r = ConfigReader.of(config("name = \" admin \""), "x.y");

    assertThat(r.validated(r.nonBlankString("name"))).isEqualTo(" admin ");
  }

  @Test
  void should_list_the_problems_of_every_block_when_another_block_is_checked_too() {
    Config root = ConfigFactory.parseString("x.y { port = -1 }, z { class = Other }").resolve();
    ConfigReader own = ConfigReader.of(root, "x.y");
    ConfigReader other = ConfigReader.of(root, "z");
    int port = own.integer("port", 0, 65535);
    other.check(other.string("class").equals("Same"), "class", "must stay Same");

    assertThatThrownBy(() -> own.validated(port, List.of(other)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll("x.y.port", "z.class: must stay Same");
  }
}
