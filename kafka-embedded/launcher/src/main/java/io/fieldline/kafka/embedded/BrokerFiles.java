package io.fieldline.kafka.embedded;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.Reader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Properties;

/**
 * The files of one broker in its data dir, and what goes into them:
 *
 * <pre>
 * server.properties   written at every start (ports, KRaft roles, the caller's overrides)
 * log4j2.properties   written at every start: INFO to stdout, without the config dumps
 * kafka.log           the child's stdout and stderr, appended across restarts
 * kafka.pid           the running broker's pid, removed when it stops
 * data/               log.dirs: meta.properties (written by formatting), topics, metadata log
 * </pre>
 *
 * Pure apart from the file reads and writes; owned by the {@link EmbeddedKafka} that holds it.
 */
final class BrokerFiles {

  static final String LOOPBACK = "127.0.0.1";

  /** A one-node test broker: single replicas, one partition for internal topics. */
  static final Map<String, String> DEFAULTS =
      Collections.unmodifiableMap(
          orderedMap(
              "num.partitions",
              "1",
              "default.replication.factor",
              "1",
              "offsets.topic.replication.factor",
              "1",
              "offsets.topic.num.partitions",
              "1",
              "transaction.state.log.replication.factor",
              "1",
              "transaction.state.log.min.isr",
              "1",
              "transaction.state.log.num.partitions",
              "1",
              "share.coordinator.state.topic.replication.factor",
              "1",
              "share.coordinator.state.topic.min.isr",
              "1",
              "share.coordinator.state.topic.num.partitions",
              "1",
              // A consumer group's first join is answered at once, not after 3 s.
              "group.initial.rebalance.delay.ms",
              "0",
              // After a kill the restarted node's controller refuses its broker's registration
              // until
              // the dead incarnation's session expires: 9 s by default, 3 s here.
              "broker.session.timeout.ms",
              "3000",
              "broker.heartbeat.interval.ms",
              "500",
              // Two cores: Kafka's defaults (8 I/O threads, 10 background threads) are for servers.
              "num.network.threads",
              "2",
              "num.io.threads",
              "2",
              "background.threads",
              "2",
              "num.recovery.threads.per.data.dir",
              "1",
              // The log cleaner allocates this on the heap (128 MiB by default) for
              // __consumer_offsets; 8 MiB fits the 256 MiB heap.
              "log.cleaner.dedupe.buffer.size",
              "8388608"));

  private static final String LOG4J2 =
      String.join(
          "\n",
          "appender.out.type = Console",
          "appender.out.name = out",
          "appender.out.layout.type = PatternLayout",
          "appender.out.layout.pattern = [%d] %p %m (%c)%n",
          "rootLogger.level = INFO",
          "rootLogger.appenderRef.out.ref = out",
          "# Every client and server config is dumped at INFO: hundreds of lines per start.",
          "logger.config.name = org.apache.kafka.common.config.AbstractConfig",
          "logger.config.level = WARN",
          "");

  private static final int MAX_TAIL_BYTES = 64 * 1024;

  private final Path dir;

  BrokerFiles(Path dataDir) {
    this.dir = dataDir.toAbsolutePath();
  }

  Path dir() {
    return dir;
  }

  Path serverProperties() {
    return dir.resolve("server.properties");
  }

  Path log4jProperties() {
    return dir.resolve("log4j2.properties");
  }

  Path log() {
    return dir.resolve("kafka.log");
  }

  Path pidFile() {
    return dir.resolve("kafka.pid");
  }

  Path logDir() {
    return dir.resolve("data");
  }

  /** Whether the storage was formatted (KRaft writes meta.properties into each log dir). */
  boolean formatted() {
    return Files.isRegularFile(logDir().resolve("meta.properties"));
  }

  /**
   * The broker's configuration: one node that is broker and controller, both listeners on
   * 127.0.0.1, {@link #DEFAULTS}, then {@code overrides} (which win).
   */
  static Map<String, String> serverProperties(
      int port, int controllerPort, Path logDir, Map<String, String> overrides) {
    String broker = LOOPBACK + ":" + port;
    String controller = LOOPBACK + ":" + controllerPort;
    Map<String, String> properties =
        orderedMap(
            "process.roles", "broker,controller",
            "node.id", "1",
            "controller.quorum.bootstrap.servers", controller,
            "listeners", "PLAINTEXT://" + broker + ",CONTROLLER://" + controller,
            "advertised.listeners", "PLAINTEXT://" + broker + ",CONTROLLER://" + controller,
            "inter.broker.listener.name", "PLAINTEXT",
            "controller.listener.names", "CONTROLLER",
            "listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs", logDir.toString());
    properties.putAll(DEFAULTS);
    properties.putAll(overrides);
    return properties;
  }

  /** Writes {@code server.properties} and {@code log4j2.properties}, creating the data dir. */
  void write(Map<String, String> serverProperties) {
    Properties properties = new Properties();
    properties.putAll(serverProperties);
    StringWriter text = new StringWriter();
    try {
      Files.createDirectories(dir);
      // Properties.store escapes what Kafka's Properties.load reads back.
      properties.store(text, "Written by Fieldline's EmbeddedKafka at every start");
      Files.writeString(serverProperties(), text.toString(), StandardCharsets.UTF_8);
      Files.writeString(log4jProperties(), LOG4J2, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the broker's files in " + dir, e);
    }
  }

  /**
   * The controller port of the last start in this data dir, if any: the formatted metadata log
   * names the controller's endpoint, so a new owner of the dir keeps it.
   */
  OptionalInt previousControllerPort() {
    if (!Files.isRegularFile(serverProperties())) {
      return OptionalInt.empty();
    }
    Properties properties = new Properties();
    try (Reader in = Files.newBufferedReader(serverProperties(), StandardCharsets.UTF_8)) {
      properties.load(in);
      String servers = properties.getProperty("controller.quorum.bootstrap.servers", "");
      return OptionalInt.of(Integer.parseInt(servers.substring(servers.lastIndexOf(':') + 1)));
    } catch (IOException | NumberFormatException e) {
      return OptionalInt.empty();
    }
  }

  void writePid(long pid) {
    try {
      Files.writeString(pidFile(), pid + "\n", StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + pidFile(), e);
    }
  }

  OptionalLong readPid() {
    try {
      return OptionalLong.of(
          Long.parseLong(Files.readString(pidFile(), StandardCharsets.UTF_8).strip()));
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  void deletePid() {
    try {
      Files.deleteIfExists(pidFile());
    } catch (IOException e) {
      // Harmless: a stale pid file is checked against the process's command line before use.
    }
  }

  /** Deletes the pid file if it still names {@code pid} (a successor may have written its own). */
  void deletePid(long pid) {
    OptionalLong written = readPid();
    if (written.isPresent() && written.getAsLong() == pid) {
      deletePid();
    }
  }

  /** The current size of {@link #log()}: where the next launch's output starts. */
  long logSize() {
    try {
      return Files.exists(log()) ? Files.size(log()) : 0;
    } catch (IOException e) {
      return 0;
    }
  }

  /** A block for an exception message: the last lines {@link #log()} got since {@code from}. */
  String logTail(long from, int maxLines) {
    try (RandomAccessFile in = new RandomAccessFile(log().toFile(), "r")) {
      long end = in.length();
      long start = Math.max(Math.min(from, end), end - MAX_TAIL_BYTES);
      byte[] bytes = new byte[(int) (end - start)];
      in.seek(start);
      in.readFully(bytes);
      List<String> lines = Arrays.asList(new String(bytes, StandardCharsets.UTF_8).split("\n"));
      return "\n--- "
          + log()
          + " (last lines) ---\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - maxLines), lines.size()));
    } catch (IOException e) {
      return "\n(cannot read " + log() + ": " + e + ")";
    }
  }

  private static Map<String, String> orderedMap(String... keysAndValues) {
    Map<String, String> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put(keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }
}
