package io.fieldline.cassandra.embedded;

import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Runs one embedded node in the foreground for scripts and local development: starts it, prints
 * exactly one line {@code cassandra cql=127.0.0.1:PORT pid=PID} on stdout, and stops it gracefully
 * on SIGTERM or Ctrl-C. Exits 1 if the node cannot start or dies by itself, 2 on bad arguments.
 *
 * <pre>
 * --work-dir DIR      FIELDLINE_CASSANDRA_WORK_DIR      default ./data/cassandra (data is kept)
 * --cql-port N        FIELDLINE_CASSANDRA_CQL_PORT      default 9042; 0 picks a free port
 * --storage-port N    FIELDLINE_CASSANDRA_STORAGE_PORT  default 0 (a free port)
 * --heap SIZE         FIELDLINE_CASSANDRA_HEAP          default 1G
 * --profile P         FIELDLINE_CASSANDRA_PROFILE       default SERVER (or TEST)
 * </pre>
 *
 * Arguments win over environment variables. The classpath file and {@code java} are found as in
 * {@link EmbeddedCassandraConfig#defaults}.
 */
public final class EmbeddedCassandraMain {

  static final String DEFAULT_WORK_DIR = "data/cassandra";
  static final int DEFAULT_CQL_PORT = 9042;

  private EmbeddedCassandraMain() {}

  public static void main(String[] args) {
    EmbeddedCassandraConfig config;
    try {
      config = parse(args, System.getenv());
    } catch (IllegalArgumentException | EmbeddedCassandraException e) {
      System.err.println("cassandra: " + e.getMessage());
      System.exit(2);
      return;
    }
    EmbeddedCassandra cassandra = EmbeddedCassandra.create(config);
    AtomicBoolean shuttingDown = new AtomicBoolean();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  shuttingDown.set(true);
                  cassandra.stop();
                },
                "fieldline-cassandra-stop"));
    try {
      cassandra.start();
    } catch (EmbeddedCassandraException e) {
      System.err.println("cassandra: " + e.getMessage());
      System.exit(1);
      return;
    }
    System.out.println(
        "cassandra cql=127.0.0.1:" + cassandra.cqlAddress().getPort() + " pid=" + cassandra.pid());
    System.out.flush();
    try {
      int code = cassandra.waitForExit();
      if (!shuttingDown.get()) {
        System.err.println("cassandra: the node exited by itself with code " + code);
        System.exit(1);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The configuration for these arguments and environment. */
  static EmbeddedCassandraConfig parse(String[] args, Map<String, String> env) {
    String workDir = env.getOrDefault("FIELDLINE_CASSANDRA_WORK_DIR", DEFAULT_WORK_DIR);
    String cqlPort = env.getOrDefault("FIELDLINE_CASSANDRA_CQL_PORT", "" + DEFAULT_CQL_PORT);
    String storagePort = env.getOrDefault("FIELDLINE_CASSANDRA_STORAGE_PORT", "0");
    String heap =
        env.getOrDefault("FIELDLINE_CASSANDRA_HEAP", EmbeddedCassandraConfig.DEFAULT_HEAP);
    String profile = env.getOrDefault("FIELDLINE_CASSANDRA_PROFILE", Profile.SERVER.name());
    List<String> unknown = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String name = args[i];
      @Nullable String value = i + 1 < args.length ? args[i + 1] : null;
      switch (name) {
        case "--work-dir" -> workDir = required(name, value);
        case "--cql-port" -> cqlPort = required(name, value);
        case "--storage-port" -> storagePort = required(name, value);
        case "--heap" -> heap = required(name, value);
        case "--profile" -> profile = required(name, value);
        default -> {
          unknown.add(name);
          continue;
        }
      }
      i++;
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          "unknown arguments "
              + unknown
              + "; expected --work-dir, --cql-port, --storage-port, --heap, --profile");
    }
    return EmbeddedCassandraConfig.defaults(Path.of(workDir), profile(profile))
        .withCqlPort(port("--cql-port", cqlPort))
        .withStoragePort(port("--storage-port", storagePort))
        .withHeap(heap);
  }

  private static String required(String name, @Nullable String value) {
    if (value == null) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return value;
  }

  private static Profile profile(String value) {
    try {
      return Profile.valueOf(value.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--profile must be SERVER or TEST, was '" + value + "'", e);
    }
  }

  private static int port(String name, String value) {
    try {
      return Integer.parseInt(value.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a number, was '" + value + "'", e);
    }
  }
}
