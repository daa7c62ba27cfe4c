package io.fieldline.kafka.embedded;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Runs one embedded broker in the foreground ({@code ./fieldline kafka}): starts it, prints exactly
 * one line {@code kafka bootstrap=127.0.0.1:PORT pid=PID dir=DIR} on stdout, and stops it
 * gracefully on SIGTERM or Ctrl-C. Exits 1 if the broker cannot start or dies by itself, 2 on bad
 * arguments.
 *
 * <pre>
 * --data-dir DIR      default ./data/kafka (topics are kept across runs)
 * --port N            default 9092; 0 picks a free port
 * --property K=V      a broker setting over ours, repeatable (auto.create.topics.enable=false)
 * </pre>
 */
public final class EmbeddedKafkaMain {

  static final String DEFAULT_DATA_DIR = "data/kafka";
  static final int DEFAULT_PORT = 9092;

  private EmbeddedKafkaMain() {}

  /** What the arguments ask for. */
  record Arguments(Path dataDir, int port, Map<String, String> properties) {}

  public static void main(String[] args) {
    Arguments arguments;
    try {
      arguments = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("kafka: " + e.getMessage());
      System.exit(2);
      return;
    }
    EmbeddedKafka kafka;
    try {
      kafka = EmbeddedKafka.start(arguments.dataDir(), arguments.port(), arguments.properties());
    } catch (RuntimeException e) {
      System.err.println("kafka: " + e.getMessage());
      System.exit(1);
      return;
    }
    // EmbeddedKafka's own shutdown hook stops the broker; this one only tells that exit apart.
    AtomicBoolean shuttingDown = new AtomicBoolean();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> shuttingDown.set(true), "fieldline-kafka-exit"));
    System.out.println(
        "kafka bootstrap="
            + kafka.bootstrapServers()
            + " pid="
            + kafka.pid()
            + " dir="
            + kafka.dataDir());
    System.out.flush();
    try {
      int code = kafka.waitForExit();
      if (!shuttingDown.get()) {
        System.err.println("kafka: the broker exited by itself with code " + code);
        System.exit(1);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static Arguments parse(String[] args) {
    Path dataDir = Path.of(DEFAULT_DATA_DIR);
    int port = DEFAULT_PORT;
    Map<String, String> properties = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      String name = args[i];
      String value = required(name, i + 1 < args.length ? args[i + 1] : null);
      switch (name) {
        case "--data-dir" -> dataDir = Path.of(value);
        case "--port" -> port = port(value);
        case "--property" -> {
          int eq = value.indexOf('=');
          if (eq < 1) {
            throw new IllegalArgumentException("--property needs KEY=VALUE, was '" + value + "'");
          }
          properties.put(value.substring(0, eq).strip(), value.substring(eq + 1).strip());
        }
        default ->
            throw new IllegalArgumentException(
                "unknown argument " + name + "; expected --data-dir, --port, --property");
      }
    }
    return new Arguments(dataDir, port, Map.copyOf(properties));
  }

  private static String required(String name, @Nullable String value) {
    if (value == null) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return value;
  }

  private static int port(String value) {
    try {
      int port = Integer.parseInt(value.strip());
      if (port < 0 || port > 65_535) {
        throw new IllegalArgumentException("--port must be 0..65535, was " + value);
      }
      return port;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--port must be a number, was '" + value + "'", e);
    }
  }
}
