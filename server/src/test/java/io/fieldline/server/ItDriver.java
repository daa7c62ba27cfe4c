package io.fieldline.server;

import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import java.time.Duration;

/**
 * The Cassandra driver settings of the integration tests: for the servers they start ({@link
 * #HOCON}) and for their own sessions ({@link #loader()}). Production keeps the driver's defaults.
 *
 * <ul>
 *   <li>No schema debouncer window: the driver completes a schema-changing statement only after
 *       refreshing its schema metadata, and that refresh first waits out the window (1 s by
 *       default) in case more changes come: a second per CREATE TABLE.
 *   <li>A quiet period of {@value #QUIET_PERIOD_MILLIS} ms instead of 2 s when a closing session's
 *       Netty groups shut down: each class closed three sessions (the keyspace's, the server's and
 *       its own), 6 s per class in all. Not zero: the driver adds a listener to its own close task
 *       after submitting it, and an executor that terminated meanwhile makes Netty log an ERROR
 *       (which {@code MqttFuzzIT} counts).
 *   <li>Quick reconnection, for the tests that stop and restart Cassandra.
 * </ul>
 */
public final class ItDriver {

  static final int QUIET_PERIOD_MILLIS = 250;

  private static final int SHUTDOWN_TIMEOUT_MILLIS = 15_000;

  /** HOCON lines for a {@link FieldlineServer}'s configuration. */
  public static final String HOCON =
      String.join(
          "\n",
          "datastax-java-driver.advanced.metadata.schema.debouncer.window = 0 seconds",
          shutdown("io-group"),
          shutdown("admin-group"));

  private ItDriver() {}

  /** A loader for a test's own {@code CqlSession}, with the settings above. */
  public static DriverConfigLoader loader() {
    return DriverConfigLoader.programmaticBuilder()
        .withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
        .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, QUIET_PERIOD_MILLIS)
        .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_TIMEOUT, SHUTDOWN_TIMEOUT_MILLIS)
        .withString(DefaultDriverOption.NETTY_IO_SHUTDOWN_UNIT, "MILLISECONDS")
        .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, QUIET_PERIOD_MILLIS)
        .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_TIMEOUT, SHUTDOWN_TIMEOUT_MILLIS)
        .withString(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_UNIT, "MILLISECONDS")
        .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
        .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(1))
        .build();
  }

  private static String shutdown(String group) {
    return "datastax-java-driver.advanced.netty."
        + group
        + ".shutdown { quiet-period = "
        + QUIET_PERIOD_MILLIS
        + ", timeout = "
        + SHUTDOWN_TIMEOUT_MILLIS
        + ", unit = MILLISECONDS }";
  }
}
