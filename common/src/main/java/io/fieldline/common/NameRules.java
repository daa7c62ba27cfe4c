package io.fieldline.common;

import org.jspecify.annotations.Nullable;

/**
 * What a name the store keeps and the REST API reads back must be: a telemetry or attribute key, a
 * device name, type or access token. At most {@link #MAX_LENGTH} characters (ThingsBoard's key
 * dictionary and device columns), not blank, no control characters (they would forge log lines and
 * could never be typed into a query), no unpaired UTF-16 surrogates (the store cannot encode them).
 * The device API and the REST API apply the same rules, so every stored key can be read back (a key
 * with a comma or edge spaces only by reading all keys: a {@code keys=} list is split and trimmed).
 */
public final class NameRules {

  /** Longest name, in UTF-16 characters. */
  public static final int MAX_LENGTH = 255;

  private NameRules() {}

  /**
   * Why {@code value} is not a valid name of at most {@code maxLength} characters ("must not be
   * blank", ...), or null if it is one.
   */
  public static @Nullable String violation(String value, int maxLength) {
    if (value.isBlank()) {
      return "must not be blank";
    }
    if (value.length() > maxLength) {
      return "must have at most " + maxLength + " characters, got " + value.length();
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c)) {
        return "must not contain control characters";
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < value.length()
          && Character.isLowSurrogate(value.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return "must not contain unpaired surrogates";
      }
    }
    return null;
  }
}
