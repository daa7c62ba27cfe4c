package io.fieldline.transport.mqtt.session;

import org.jspecify.annotations.Nullable;

/**
 * Makes client-supplied text (client ids, user names, topics, keys) safe to write into a log line:
 * control characters and line and paragraph separators become a backslash, "u" and four hex digits
 * (a newline is written as backslash-u000a) and a backslash is doubled, so a client cannot forge a
 * line or a field; and the text is cut at {@value #MAX_CHARS} characters followed by "…", so a
 * client cannot write a 65 KB line. Stateless, thread-safe.
 */
public final class LogSafe {

  /** Characters of client text kept in a log line. */
  public static final int MAX_CHARS = 64;

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private LogSafe() {}

  /** {@code text} escaped and truncated; {@code "null"} for null. */
  public static String text(@Nullable String text) {
    if (text == null) {
      return "null";
    }
    int end = Math.min(text.length(), MAX_CHARS);
    if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1)) && end < text.length()) {
      end--; // do not cut a surrogate pair in half
    }
    StringBuilder out = null;
    for (int i = 0; i < end; i++) {
      char c = text.charAt(i);
      if (needsEscape(c)) {
        if (out == null) {
          out = new StringBuilder(end + 16).append(text, 0, i);
        }
        if (c == '\\') {
          out.append("\\\\");
        } else {
          out.append("\\u")
              .append(HEX[(c >> 12) & 0xf])
              .append(HEX[(c >> 8) & 0xf])
              .append(HEX[(c >> 4) & 0xf])
              .append(HEX[c & 0xf]);
        }
      } else if (out != null) {
        out.append(c);
      }
    }
    String safe = out != null ? out.toString() : text.substring(0, end);
    return end < text.length() ? safe + "…" : safe;
  }

  private static boolean needsEscape(char c) {
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\\' || c == '\u2028' || c == '\u2029';
  }
}
