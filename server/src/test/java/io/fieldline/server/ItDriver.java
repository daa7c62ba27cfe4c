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
 *   <li>No quiet period when a session's Netty groups shut down (2 s each by default): each class
 *       closed three sessions (the keyspace's, the server's and its own), 6 s per class in all.
 *   <li>Quick reconnection, for the tests that stop and restart Cassandra.
 * </ul>
 */
public final class ItDriver {

  /** HOCON lines for a {@link FieldlineServer}'s configuration. */
  public static final String HOCON =
      String.join(
          "\n",
          "datastax-java-driver.advanced.metadata.schema.debouncer.window = 0 seconds",
          "datastax-java-driver.advanced.netty.io-group.shutdown.quiet-period = 0",
          "datastax-java-driver.advanced.netty.admin-group.shutdown.quiet-period = 0");

  private ItDriver() {}

  /** A loader for a test's own {@code CqlSession}, with the settings above. */
  public static DriverConfigLoader loader() {
    return DriverConfigLoader.programmaticBuilder()
        .withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
        .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, 0)
        .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, 0)
        .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
        .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(1))
        .build();
  }
}
