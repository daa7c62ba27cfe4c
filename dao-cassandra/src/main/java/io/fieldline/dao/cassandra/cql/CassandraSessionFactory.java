package io.fieldline.dao.cassandra.cql;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.internal.core.config.typesafe.DefaultDriverConfigLoader;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Builds the {@link CqlSession} from Fieldline's single HOCON configuration: the driver reads its
 * own {@code datastax-java-driver} block of the same {@link Config} (tuned in this module's {@code
 * reference.conf}, overridable in {@code application.conf} or by {@code FIELDLINE_CASSANDRA_*}
 * variables), contact points come from {@code fieldline.cassandra.contact-points} or, when that is
 * empty, from the caller (the embedded node's address). Driver metrics go to the given Micrometer
 * registry. Stateless.
 */
public final class CassandraSessionFactory {

  private CassandraSessionFactory() {}

  /**
   * Connects, blocking until Cassandra answers (with {@code advanced.reconnect-on-init = true} it
   * keeps retrying until then). Call at startup, never on a driver or event-loop thread.
   *
   * @param root the resolved application configuration (the driver's reference.conf is added as a
   *     fallback)
   * @param config the parsed {@code fieldline.cassandra} block
   * @param defaultContactPoints used when {@code config.contactPoints()} is empty
   * @param registry where driver metrics go, or null for none
   * @throws IllegalArgumentException when there is no contact point at all
   */
  public static CqlSession open(
      Config root,
      CassandraConfig config,
      List<InetSocketAddress> defaultContactPoints,
      @Nullable MeterRegistry registry) {
    return builder(root, config, defaultContactPoints, registry).build();
  }

  private static CqlSessionBuilder builder(
      Config root,
      CassandraConfig config,
      List<InetSocketAddress> defaultContactPoints,
      @Nullable MeterRegistry registry) {
    List<InetSocketAddress> points =
        config.contactPoints().isEmpty() ? defaultContactPoints : config.contactPoints();
    if (points.isEmpty()) {
      throw new IllegalArgumentException(
          "no Cassandra contact point: set fieldline.cassandra.contact-points"
              + " (FIELDLINE_CASSANDRA_CONTACT_POINTS) or start the embedded node");
    }
    Config driverBlock =
        root.withFallback(ConfigFactory.defaultReference())
            .getConfig(DefaultDriverConfigLoader.DEFAULT_ROOT_PATH);
    CqlSessionBuilder builder =
        CqlSession.builder()
            // Reloading off: every Fieldline setting is "Reloadable: no".
            .withConfigLoader(new DefaultDriverConfigLoader(() -> driverBlock, false))
            .addContactPoints(resolved(points));
    if (registry != null) {
      builder.withMetricRegistry(registry);
    }
    return builder;
  }

  private static List<InetSocketAddress> resolved(List<InetSocketAddress> points) {
    List<InetSocketAddress> out = new ArrayList<>(points.size());
    for (InetSocketAddress point : points) {
      out.add(
          point.isUnresolved()
              ? new InetSocketAddress(point.getHostString(), point.getPort())
              : point);
    }
    return out;
  }
}
