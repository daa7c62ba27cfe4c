package io.fieldline.server;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The server's own settings ({@code fieldline.data-dir}, {@code http}, {@code admin}, {@code auth},
 * {@code embedded-cassandra}, {@code demo-device}, {@code shutdown}); see {@code reference.conf}.
 */
public record ServerConfig(
    Path dataDir,
    String httpHost,
    int httpPort,
    String adminUsername,
    String adminPassword,
    String jwtSecret,
    Duration tokenTtl,
    Duration refreshTokenTtl,
    boolean embeddedCassandra,
    int embeddedCqlPort,
    int embeddedStoragePort,
    String embeddedHeap,
    String embeddedProfile,
    Duration embeddedStartTimeout,
    String cassandraClasspathFile,
    boolean demoDevice,
    String demoDeviceName) {

  /** Reads and validates the keys; reports every invalid one at once. */
  public static ServerConfig from(Config root) {
    Config f = root.getConfig("fieldline");
    ServerConfig config =
        new ServerConfig(
            Path.of(f.getString("data-dir")),
            f.getString("http.host"),
            f.getInt("http.port"),
            f.getString("admin.username"),
            f.getString("admin.password"),
            f.getString("auth.jwt-secret"),
            f.getDuration("auth.token-ttl"),
            f.getDuration("auth.refresh-token-ttl"),
            f.getBoolean("embedded-cassandra.enabled"),
            f.getInt("embedded-cassandra.cql-port"),
            f.getInt("embedded-cassandra.storage-port"),
            f.getString("embedded-cassandra.heap"),
            f.getString("embedded-cassandra.profile").toLowerCase(Locale.ROOT),
            f.getDuration("embedded-cassandra.start-timeout"),
            f.getString("embedded-cassandra.classpath-file"),
            f.getBoolean("demo-device.enabled"),
            f.getString("demo-device.name"));
    List<String> errors = new ArrayList<>();
    if (config.httpPort < 0 || config.httpPort > 65535) {
      errors.add("http.port must be 0..65535, got " + config.httpPort);
    }
    if (config.adminUsername.isBlank()) {
      errors.add("admin.username must not be empty");
    }
    if (!config.jwtSecret.isEmpty() && config.jwtSecret.length() < 32) {
      errors.add("auth.jwt-secret must have at least 32 characters (or be empty to generate one)");
    }
    if (config.tokenTtl.isNegative() || config.tokenTtl.isZero()) {
      errors.add("auth.token-ttl must be positive");
    }
    if (!config.embeddedProfile.equals("server") && !config.embeddedProfile.equals("test")) {
      errors.add(
          "embedded-cassandra.profile must be server or test, got " + config.embeddedProfile);
    }
    if (config.embeddedCqlPort < 0 || config.embeddedCqlPort > 65535) {
      errors.add("embedded-cassandra.cql-port must be 0..65535");
    }
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid fieldline configuration: " + String.join("; ", errors));
    }
    return config;
  }
}
