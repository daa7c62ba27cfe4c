package io.fieldline.perf;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Opens the driver session of the bench tools (row check, raw writer): one connection, generous
 * timeouts for a busy 2-core box, local data center {@code datacenter1}, native protocol V4 (as
 * Fieldline's own session).
 */
public final class Cql {

  private Cql() {}

  /** {@code contact} is {@code host:port}. */
  public static CqlSession open(String contact) {
    int colon = contact.lastIndexOf(':');
    InetSocketAddress address =
        new InetSocketAddress(
            contact.substring(0, colon), Integer.parseInt(contact.substring(colon + 1)));
    DriverConfigLoader config =
        DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(30))
            .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
            .withDuration(
                DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(30))
            .withInt(DefaultDriverOption.CONNECTION_MAX_REQUESTS, 32768)
            .withInt(DefaultDriverOption.CONNECTION_POOL_LOCAL_SIZE, 1)
            .withString(DefaultDriverOption.SESSION_NAME, "bench-cql")
            // The protocol Fieldline pins (its reference.conf), so the raw writer pays the same.
            .withString(DefaultDriverOption.PROTOCOL_VERSION, "V4")
            .build();
    return CqlSession.builder()
        .addContactPoint(address)
        .withLocalDatacenter("datacenter1")
        .withConfigLoader(config)
        .build();
  }
}
