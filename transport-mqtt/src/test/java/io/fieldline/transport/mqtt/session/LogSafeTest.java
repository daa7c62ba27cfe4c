package io.fieldline.transport.mqtt.session;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogSafeTest {

  @Test
  void should_keep_text_when_it_is_short_and_printable() {
    assertThat(LogSafe.text("device-42 ünïcode")).isEqualTo("device-42 ünïcode");
  }

  @Test
  void should_escape_control_characters_when_text_forges_a_line() {
    String forged = "x\n2026-01-01 ERROR forged\r\t" + (char) 0 + (char) 0x7f + "\u2028";

    assertThat(LogSafe.text(forged))
        .isEqualTo("x\\u000a2026-01-01 ERROR forged\\u000d\\u0009\\u0000\\u007f\\u2028")
        .doesNotContain("\n", "\r");
  }

  @Test
  void should_double_backslashes_when_text_contains_them() {
    assertThat(LogSafe.text("a\\u000ab")).isEqualTo("a\\\\u000ab");
  }

  @Test
  void should_truncate_with_ellipsis_when_text_is_longer_than_64_chars() {
    String safe = LogSafe.text("a".repeat(65_000));

    assertThat(safe).isEqualTo("a".repeat(64) + "…");
  }

  @Test
  void should_keep_text_of_exactly_64_chars_whole() {
    assertThat(LogSafe.text("b".repeat(64))).isEqualTo("b".repeat(64));
  }

  @Test
  void should_write_null_when_text_is_null() {
    assertThat(LogSafe.text(null)).isEqualTo("null");
  }
}
