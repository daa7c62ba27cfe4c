package io.fieldline.server;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import io.fieldline.server.http.HttpListenerConfig;
import io.fieldline.server.rest.RestConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The server's own settings ({@code fieldline.data-dir}, {@code http}, {@code admin}, {@code auth},
 * {@code embedded-cassandra}, {@code demo-device}, {@code payload}); see {@code reference.conf}.
 */
public record ServerConfig(
    Path dataDir,
    String httpHost,
    int httpPort,
    HttpListenerConfig listener,
    RestConfig rest,
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
    Duration embeddedTimerSlack,
    String cassandraClasspathFile,
    boolean demoDevice,
    String demoDeviceName,
    boolean payloadTypeCast,
    int payloadMaxStringValueLength) {

  /** Reads and validates the keys; reports every invalid one at once. */
  public static ServerConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, "fieldline");
    Path dataDir = Path.of(r.string("data-dir"));
    String httpHost = r.string("http.host");
    int httpPort = r.integer("http.port", 0, 65535);
    // Pekko's limit of open connections, applied by the listener (which replaces Pekko's own).
    HttpListenerConfig listener =
        new HttpListenerConfig(
            root.getInt("pekko.http.server.max-connections"),
            r.integer("http.max-connections-per-address", 0),
            r.positiveDuration("http.header-read-timeout"),
            r.positiveDuration("http.body-read-timeout"),
            r.bytes("http.min-body-rate", 0, Integer.MAX_VALUE));
    List<String> corsOrigins = RestConfig.origins(r.string("http.cors.allowed-origins"));
    for (String origin : corsOrigins) {
      r.check(
          origin.equals("*") || origin.matches("https?://[^/\\s]+"),
          "http.cors.allowed-origins",
          "each origin must be * or scheme://host[:port], got " + origin);
    }
    RestConfig rest =
        new RestConfig(
            r.bytes("http.max-body-size", 1024, Integer.MAX_VALUE),
            r.integer("http.login.max-failures-per-user", 1),
            r.integer("http.login.max-failures-per-address", 1),
            r.positiveDuration("http.login.window"),
            r.integer("http.login.max-tracked", 1, 1_000_000),
            corsOrigins,
            r.nonNegativeDuration("http.cors.max-age"),
            RestConfig.QueryLimits.from(root));
    String adminUsername = r.nonBlankString("admin.username");
    String adminPassword = r.string("admin.password");
    String jwtSecret = r.string("auth.jwt-secret");
    r.check(
        jwtSecret.isEmpty() || jwtSecret.length() >= 32,
        "auth.jwt-secret",
        "must have at least 32 characters (or be empty to generate one)");
    Duration tokenTtl = r.positiveDuration("auth.token-ttl");
    Duration refreshTokenTtl = r.positiveDuration("auth.refresh-token-ttl");
    boolean embeddedCassandra = r.bool("embedded-cassandra.enabled");
    int embeddedCqlPort = r.integer("embedded-cassandra.cql-port", 0, 65535);
    int embeddedStoragePort = r.integer("embedded-cassandra.storage-port", 0, 65535);
    String embeddedHeap = r.string("embedded-cassandra.heap");
    String embeddedProfile = r.string("embedded-cassandra.profile").toLowerCase(Locale.ROOT);
    r.check(
        embeddedProfile.equals("server") || embeddedProfile.equals("test"),
        "embedded-cassandra.profile",
        "must be server or test, got " + embeddedProfile);
    Duration embeddedStartTimeout = r.positiveDuration("embedded-cassandra.start-timeout");
    Duration embeddedTimerSlack = r.nonNegativeDuration("embedded-cassandra.timer-slack");
    r.check(
        embeddedTimerSlack.compareTo(Duration.ofMillis(100)) <= 0,
        "embedded-cassandra.timer-slack",
        "must be at most 100 ms, got " + embeddedTimerSlack);
    String cassandraClasspathFile = r.string("embedded-cassandra.classpath-file");
    boolean demoDevice = r.bool("demo-device.enabled");
    String demoDeviceName = r.string("demo-device.name");
    boolean payloadTypeCast = r.bool("payload.type-cast");
    int payloadMaxStringValueLength = r.integer("payload.max-string-value-length", 0);
    return r.validated(
        new ServerConfig(
            dataDir,
            httpHost,
            httpPort,
            listener,
            rest,
            adminUsername,
            adminPassword,
            jwtSecret,
            tokenTtl,
            refreshTokenTtl,
            embeddedCassandra,
            embeddedCqlPort,
            embeddedStoragePort,
            embeddedHeap,
            embeddedProfile,
            embeddedStartTimeout,
            embeddedTimerSlack,
            cassandraClasspathFile,
            demoDevice,
            demoDeviceName,
            payloadTypeCast,
            payloadMaxStringValueLength));
  }
}
