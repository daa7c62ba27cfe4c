package io.fieldline.perf;

import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * {@code --name value} / {@code --name=value} arguments of the bench tools' {@code main}s, with
 * defaults and a clear error for a missing required one.
 */
public final class CommandLine {

  private final Map<String, String> values = new HashMap<>();

  private CommandLine() {}

  public static CommandLine parse(String[] args) {
    CommandLine line = new CommandLine();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) {
        throw new IllegalArgumentException("expected --name value, got " + arg);
      }
      int eq = arg.indexOf('=');
      if (eq > 0) {
        line.values.put(arg.substring(2, eq), arg.substring(eq + 1));
      } else if (i + 1 < args.length) {
        line.values.put(arg.substring(2), args[++i]);
      } else {
        throw new IllegalArgumentException("missing value for " + arg);
      }
    }
    return line;
  }

  public String get(String name) {
    String value = values.get(name);
    if (value == null) {
      throw new IllegalArgumentException("missing required argument --" + name);
    }
    return value;
  }

  public String get(String name, String defaultValue) {
    return values.getOrDefault(name, defaultValue);
  }

  public @Nullable String optional(String name) {
    return values.get(name);
  }

  public int getInt(String name, int defaultValue) {
    String value = values.get(name);
    return value == null ? defaultValue : Integer.parseInt(value);
  }

  public long getLong(String name, long defaultValue) {
    String value = values.get(name);
    return value == null ? defaultValue : Long.parseLong(value);
  }

  public double getDouble(String name, double defaultValue) {
    String value = values.get(name);
    return value == null ? defaultValue : Double.parseDouble(value);
  }
}
