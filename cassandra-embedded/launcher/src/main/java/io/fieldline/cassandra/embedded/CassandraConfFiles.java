package io.fieldline.cassandra.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The files under {@code workDir}: generates {@code conf/cassandra.yaml} and {@code
 * conf/logback.xml} before every start (cassandra-all ships neither), and names the data and log
 * locations. Every path written into the configuration is absolute, so the child's working
 * directory does not matter.
 */
final class CassandraConfFiles {

  static final String CLUSTER_NAME = "fieldline";

  private final Path workDir;

  CassandraConfFiles(Path workDir) {
    this.workDir = workDir;
  }

  Path confDir() {
    return workDir.resolve("conf");
  }

  Path yaml() {
    return confDir().resolve("cassandra.yaml");
  }

  Path logback() {
    return confDir().resolve("logback.xml");
  }

  /** Empty; exists so that Cassandra does not warn about it every minute. */
  Path triggersDir() {
    return confDir().resolve("triggers");
  }

  Path dataDir() {
    return workDir.resolve("data");
  }

  Path logDir() {
    return workDir.resolve("logs");
  }

  /** Cassandra's own log (logback file appender). */
  Path systemLog() {
    return logDir().resolve("system.log");
  }

  /** The child's stdout and stderr: JVM warnings, crashes, anything before logback starts. */
  Path stdoutLog() {
    return logDir().resolve("stdout.log");
  }

  Path pidFile() {
    return workDir.resolve("cassandra.pid");
  }

  /** Creates the directories and (re)writes both configuration files. */
  void write(EmbeddedCassandraConfig config, CassandraPorts ports) throws IOException {
    Files.createDirectories(triggersDir());
    Files.createDirectories(dataDir());
    Files.createDirectories(logDir());
    Files.writeString(yaml(), yamlText(config, ports), StandardCharsets.UTF_8);
    Files.writeString(logback(), logbackText(), StandardCharsets.UTF_8);
  }

  /**
   * The complete {@code cassandra.yaml}: the recipe's single-node settings, then the profile's,
   * then {@link EmbeddedCassandraConfig#extraYaml()} replacing keys in place (Cassandra's yaml
   * loader is not asked to resolve duplicate keys).
   */
  String yamlText(EmbeddedCassandraConfig config, CassandraPorts ports) {
    Map<String, String> keys = new LinkedHashMap<>();
    keys.put("cluster_name", quoted(CLUSTER_NAME));
    keys.put("num_tokens", "1");
    keys.put("partitioner", "org.apache.cassandra.dht.Murmur3Partitioner");
    keys.put("data_file_directories", "\n  - " + quoted(dataDir().resolve("data")));
    keys.put("commitlog_directory", quoted(dataDir().resolve("commitlog")));
    keys.put("saved_caches_directory", quoted(dataDir().resolve("saved_caches")));
    keys.put("hints_directory", quoted(dataDir().resolve("hints")));
    keys.put("cdc_raw_directory", quoted(dataDir().resolve("cdc_raw")));
    // periodic: batch halved throughput, group was 10-30x slower (docs/cassandra-embedded.md).
    keys.put("commitlog_sync", "periodic");
    keys.put("commitlog_sync_period", "10000ms");
    keys.put(
        "seed_provider",
        "\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider"
            + "\n    parameters:"
            + "\n      - seeds: \"127.0.0.1:"
            + ports.storage()
            + "\"");
    keys.put("listen_address", "127.0.0.1");
    keys.put("rpc_address", "127.0.0.1");
    keys.put("storage_port", Integer.toString(ports.storage()));
    keys.put("ssl_storage_port", Integer.toString(ports.sslStorage()));
    keys.put("native_transport_port", Integer.toString(ports.cql()));
    keys.put("start_native_transport", "true");
    // SimpleSnitch puts the node in "datacenter1", the driver's local datacenter.
    keys.put("endpoint_snitch", "SimpleSnitch");
    keys.put("authenticator", "AllowAllAuthenticator");
    keys.put("authorizer", "AllowAllAuthorizer");
    keys.put("role_manager", "CassandraRoleManager");
    // Otherwise every TRUNCATE and DROP leaves a snapshot on disk.
    keys.put("auto_snapshot", "false");
    // Fieldline coalesces concurrent device messages into shared unlogged batches (group commit):
    // many small partitions per batch is the intended shape, not a mistake worth a WARN each time.
    keys.put("unlogged_batch_across_partitions_warn_threshold", "1000");
    // Cassandra checks batch_size_fail_threshold (50 KiB) only for a batch already over the warn
    // threshold: the warn threshold at the fail threshold keeps that limit exactly where a default
    // Cassandra has it (a warn threshold above it, 64 KiB until issue 28, raised the limit to 64
    // KiB here and hid batches that an external Cassandra refuses).
    keys.put("batch_size_warn_threshold", "50KiB");
    switch (config.profile()) {
      case TEST -> {
        // Cassandra's default (heap_buffers): nothing to tune for start-up speed.
      }
      case SERVER -> keys.put("memtable_allocation_type", "offheap_objects");
    }
    keys.putAll(config.extraYaml());

    StringBuilder text =
        new StringBuilder(
            "# Generated by Fieldline's EmbeddedCassandra; rewritten at each start.\n");
    keys.forEach(
        (key, value) ->
            text.append(key)
                .append(value.startsWith("\n") ? ":" : ": ")
                .append(value)
                .append('\n'));
    return text.toString();
  }

  /** Logback 1.2 configuration (Cassandra's version): INFO to a size-capped rolling file. */
  String logbackText() {
    String log = xmlEscaped(systemLog().toString());
    return """
    <configuration scan="false" debug="false">
      <appender name="SYSTEMLOG" class="ch.qos.logback.core.rolling.RollingFileAppender">
        <file>%1$s</file>
        <rollingPolicy class="ch.qos.logback.core.rolling.FixedWindowRollingPolicy">
          <fileNamePattern>%1$s.%%i.zip</fileNamePattern>
          <minIndex>1</minIndex>
          <maxIndex>5</maxIndex>
        </rollingPolicy>
        <triggeringPolicy class="ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy">
          <maxFileSize>50MB</maxFileSize>
        </triggeringPolicy>
        <encoder>
          <pattern>%%-5level [%%thread] %%date{ISO8601} %%logger{0} - %%msg%%n</pattern>
        </encoder>
      </appender>
      <root level="INFO">
        <appender-ref ref="SYSTEMLOG"/>
      </root>
    </configuration>
    """
        .formatted(log);
  }

  private static String quoted(Object value) {
    return '"' + value.toString().replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }

  private static String xmlEscaped(String value) {
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
