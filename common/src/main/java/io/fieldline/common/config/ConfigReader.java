package io.fieldline.common.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * Reads one block of the configuration into a module's config record, collecting every problem
 * instead of stopping at the first: each module's {@code XxxConfig.from(Config)} reads its keys
 * through one reader, adds its own rules with {@link #check}, and ends with {@link #validated},
 * which throws one {@link IllegalArgumentException} listing all of them with their full paths
 * ({@code fieldline.mqtt.port: must be 0..65535, got 70000}).
 *
 * <p>A key that cannot be read (missing, wrong type) is reported once; the reader returns a
 * placeholder for it and skips every later rule on that key, so one typo yields one line. Used at
 * startup only, on one thread.
 */
public final class ConfigReader {

  private final String path;
  private final Config block;
  private final List<String> errors = new ArrayList<>();
  private final Set<String> unreadable = new HashSet<>();

  private ConfigReader(String path, Config block) {
    this.path = path;
    this.block = block;
  }

  /**
   * A reader of the block at {@code path} of a resolved root configuration. A missing or non-object
   * block is reported like any other error (when {@link #validated} is called).
   */
  public static ConfigReader of(Config root, String path) {
    try {
      return new ConfigReader(path, root.getConfig(path));
    } catch (ConfigException e) {
      ConfigReader reader = new ConfigReader(path, ConfigFactory.empty());
      reader.errors.add(path + ": " + e.getMessage());
      return reader;
    }
  }

  /** A string, as written. */
  public String string(String key) {
    return read(key, "", block::getString);
  }

  /** A string that must not be blank; returned as written. */
  public String nonBlankString(String key) {
    String value = string(key);
    check(!value.isBlank(), key, "must not be empty");
    return value;
  }

  /** A boolean ({@code true}/{@code false}, {@code on}/{@code off}, {@code yes}/{@code no}). */
  public boolean bool(String key) {
    return read(key, false, block::getBoolean);
  }

  /** An integer within {@code [min, max]}. */
  public int integer(String key, int min, int max) {
    int value = read(key, min, block::getInt);
    check(value >= min && value <= max, key, "must be " + min + ".." + max + ", got " + value);
    return value;
  }

  /** An integer of at least {@code min}. */
  public int integer(String key, int min) {
    int value = read(key, min, block::getInt);
    check(value >= min, key, "must be >= " + min + ", got " + value);
    return value;
  }

  /**
   * A size in bytes ({@code 64 KiB}, {@code 1 MiB}) within {@code [min, max]}. Read as a long, so 4
   * GiB + 100 B is reported as too large rather than wrapped into 100 B.
   */
  public long bytes(String key, long min, long max) {
    long value = read(key, min, block::getBytes);
    check(
        value >= min && value <= max, key, "must be " + min + ".." + max + " bytes, got " + value);
    return value;
  }

  /** A duration ({@code 10s}, {@code 500ms}), any sign. */
  public Duration duration(String key) {
    return read(key, Duration.ZERO, block::getDuration);
  }

  /** A duration above zero. */
  public Duration positiveDuration(String key) {
    Duration value = read(key, Duration.ofSeconds(1), block::getDuration);
    check(!value.isNegative() && !value.isZero(), key, "must be a positive duration, got " + value);
    return value;
  }

  /** A duration of zero or more. */
  public Duration nonNegativeDuration(String key) {
    Duration value = duration(key);
    check(!value.isNegative(), key, "must not be negative, got " + value);
    return value;
  }

  /**
   * One of an enum's constants, written in any case with {@code -} for {@code _} ({@code
   * dead-letter} for {@code DEAD_LETTER}).
   */
  public <E extends Enum<E>> E oneOf(String key, Class<E> type) {
    E[] constants = type.getEnumConstants();
    String text = read(key, "", block::getString);
    if (unreadable.contains(key)) {
      return constants[0];
    }
    String wanted = text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
    for (E constant : constants) {
      if (constant.name().equals(wanted)) {
        return constant;
      }
    }
    List<String> names = new ArrayList<>();
    for (E constant : constants) {
      names.add(constant.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }
    fail(key, "must be one of " + String.join(", ", names) + ", got '" + text + "'");
    return constants[0];
  }

  /**
   * A value parsed from a string by {@code parser}, which throws {@link IllegalArgumentException}
   * with a message saying what is wrong (contact point lists, host:port pairs).
   */
  public <T> T parsed(String key, T placeholder, Function<String, T> parser) {
    String text = read(key, "", block::getString);
    if (unreadable.contains(key)) {
      return placeholder;
    }
    try {
      return parser.apply(text);
    } catch (IllegalArgumentException e) {
      fail(key, String.valueOf(e.getMessage()));
      return placeholder;
    }
  }

  /**
   * Adds a rule of the module's own: when {@code ok} is false, {@code message} is reported for
   * {@code key} — unless the key could not be read at all (then that is already reported).
   */
  public void check(boolean ok, String key, String message) {
    if (!ok && !unreadable.contains(key)) {
      errors.add(path + "." + key + ": " + message);
    }
  }

  /**
   * A rule of {@code key} that also reads {@code others} (low water below the maximum): skipped
   * when any of them could not be read, since the placeholder read instead would make it fail.
   */
  public void check(boolean ok, String key, String message, String... others) {
    for (String other : others) {
      if (unreadable.contains(other)) {
        return;
      }
    }
    check(ok, key, message);
  }

  /**
   * Returns {@code config} if nothing was reported.
   *
   * @throws IllegalArgumentException listing every problem, one per line, with its full path
   */
  public <T> T validated(T config) {
    return validated(config, List.of());
  }

  /**
   * Returns {@code config} if neither this reader nor {@code others} (readers of other blocks the
   * module checks, such as the driver's) reported anything.
   *
   * @throws IllegalArgumentException listing every problem of all of them, one per line
   */
  public <T> T validated(T config, List<ConfigReader> others) {
    List<String> all = new ArrayList<>(errors);
    others.forEach(other -> all.addAll(other.errors));
    if (!all.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid " + path + " configuration:\n  " + String.join("\n  ", all));
    }
    return config;
  }

  private void fail(String key, String message) {
    errors.add(path + "." + key + ": " + message);
    unreadable.add(key);
  }

  private <T> T read(String key, T placeholder, Function<String, T> getter) {
    try {
      return getter.apply(key);
    } catch (ConfigException e) {
      fail(key, String.valueOf(e.getMessage()));
      return placeholder;
    }
  }
}
