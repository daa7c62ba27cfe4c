package io.fieldline.transport.http;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import io.fieldline.transport.common.bounds.DeviceBoundsConfig;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
import java.time.Duration;

/**
 * The HTTP device API's settings: its own keys under {@code fieldline.http-device} (documented in
 * this module's reference.conf), and the bounds it shares with the MQTT device API ({@link
 * DeviceBoundsConfig}, keys under {@code fieldline.mqtt}) so that a device meets the same limits
 * whichever protocol it speaks.
 *
 * @param enabled whether the {@code /api/v1/{token}/...} routes are served at all (when not, every
 *     path under {@code /api/v1/} answers 404)
 * @param defaultPollTimeout a long poll's wait when it gives no {@code timeout} (or 0)
 * @param minPollTimeout the shortest wait of a long poll; a smaller {@code timeout} is raised to it
 * @param maxPollTimeout the longest wait of a long poll; a larger {@code timeout} is clamped to it
 * @param maxPollsPerDevice long polls (attribute updates and RPC together) one device may have
 *     waiting on this node; one more answers 429
 * @param maxPolls long polls waiting on this node; one more answers 429. At most {@code
 *     pekko.http.server.max-connections} minus {@link #CONNECTION_HEADROOM}, as each holds a
 *     connection
 * @param failedAuthBurst requests with an unknown token one source address may make in a row; when
 *     spent, its requests answer 429 without a token look-up (0 = no limit)
 * @param failedAuthRefill time in which a source address regains one failed authentication
 * @param failedAuthMaxAddresses source addresses whose failed authentications are remembered
 * @param maxBodyBytes largest request body ({@code fieldline.mqtt.max-packet-size}); larger answers
 *     413
 * @param maxWritesPerDevice telemetry and attribute uploads of one device being stored at once
 *     ({@code fieldline.mqtt.max-inflight}); one more answers 429
 * @param clientRpcRate client-side RPC requests per second per device ({@code
 *     fieldline.mqtt.client-rpc-rate}, 0 = no limit); beyond it and its burst, 429
 * @param clientRpcBurst client-side RPC requests a device may send at once on top of the rate
 * @param attributeReadRate attribute reads per second per device ({@code
 *     fieldline.mqtt.attribute-request-rate}, 0 = no limit); beyond it and its burst, 429
 * @param attributeReadBurst attribute reads a device may send at once on top of the rate
 * @param maxPendingRpcPerDevice two-way RPC requests handed to a device's polls and not yet
 *     answered ({@code fieldline.mqtt.downlink.max-pending-rpc}); beyond it a poll takes no more
 * @param invalidPayload whether an unparseable upload is also kept as a dead letter ({@code
 *     fieldline.mqtt.invalid-payload}); it is answered 400 either way
 * @param maxPollsPerAddress long polls from one source address waiting on this node, whatever their
 *     devices; one more answers 429 (0 = no limit)
 */
public record DeviceApiConfig(
    boolean enabled,
    Duration defaultPollTimeout,
    Duration minPollTimeout,
    Duration maxPollTimeout,
    int maxPollsPerDevice,
    int maxPolls,
    int failedAuthBurst,
    Duration failedAuthRefill,
    int failedAuthMaxAddresses,
    int maxBodyBytes,
    int maxWritesPerDevice,
    int clientRpcRate,
    int clientRpcBurst,
    int attributeReadRate,
    int attributeReadBurst,
    int maxPendingRpcPerDevice,
    InvalidPayloadPolicy invalidPayload,
    int maxPollsPerAddress) {

  private static final String IDLE_TIMEOUT = "pekko.http.server.idle-timeout";
  private static final String MAX_CONNECTIONS = "pekko.http.server.max-connections";

  /** Room after a poll's wait for its answer to be written before Pekko's own timeouts. */
  static final Duration ANSWER_MARGIN = Duration.ofSeconds(5);

  /**
   * HTTP connections {@code max-polls} must leave free of {@code pekko.http.server.max-connections}
   * for everything else (REST, WebSocket, health checks, uploads): Pekko accepts no connection
   * beyond its maximum, so polls holding them all would starve the rest.
   */
  static final int CONNECTION_HEADROOM = 256;

  /** Reads {@code fieldline.http-device} and the shared bounds; reports every invalid key. */
  public static DeviceApiConfig from(Config root) {
    DeviceBoundsConfig bounds = DeviceBoundsConfig.from(root);
    ConfigReader r = ConfigReader.of(root, "fieldline.http-device");
    boolean enabled = r.bool("enabled");
    Duration defaultPollTimeout = r.positiveDuration("default-poll-timeout");
    Duration minPollTimeout = r.positiveDuration("min-poll-timeout");
    Duration maxPollTimeout = r.positiveDuration("max-poll-timeout");
    int maxPollsPerDevice = r.integer("max-polls-per-device", 1);
    int maxPolls = r.integer("max-polls", 1);
    int maxPollsPerAddress = r.integer("max-polls-per-address", 0);
    int failedAuthBurst = r.integer("failed-auth-burst", 0);
    Duration failedAuthRefill = r.positiveDuration("failed-auth-refill");
    int failedAuthMaxAddresses = r.integer("failed-auth-max-addresses", 1);
    r.check(
        defaultPollTimeout.compareTo(maxPollTimeout) <= 0,
        "default-poll-timeout",
        "must be at most max-poll-timeout");
    r.check(
        minPollTimeout.compareTo(defaultPollTimeout) <= 0,
        "min-poll-timeout",
        "must be at most default-poll-timeout");
    if (root.hasPath(MAX_CONNECTIONS)) {
      int connections = root.getInt(MAX_CONNECTIONS);
      r.check(
          (long) maxPolls + CONNECTION_HEADROOM <= connections,
          "max-polls",
          "plus "
              + CONNECTION_HEADROOM
              + " must be at most "
              + MAX_CONNECTIONS
              + " ("
              + connections
              + "): polls holding every connection would lock REST and health checks out");
    }
    // A waiting poll holds its connection silent: Pekko closes a connection idle longer than its
    // idle-timeout, and the poll must answer before that.
    if (root.hasPath(IDLE_TIMEOUT) && !"infinite".equals(root.getString(IDLE_TIMEOUT))) {
      Duration idle = root.getDuration(IDLE_TIMEOUT);
      r.check(
          maxPollTimeout.plus(ANSWER_MARGIN).compareTo(idle) <= 0,
          "max-poll-timeout",
          "plus 5 s must be at most " + IDLE_TIMEOUT + " (" + idle + ")");
    }
    return r.validated(
        new DeviceApiConfig(
            enabled,
            defaultPollTimeout,
            minPollTimeout,
            maxPollTimeout,
            maxPollsPerDevice,
            maxPolls,
            failedAuthBurst,
            failedAuthRefill,
            failedAuthMaxAddresses,
            bounds.maxPacketSize(),
            bounds.maxInflight(),
            bounds.clientRpcRate(),
            bounds.clientRpcBurst(),
            bounds.attributeRequestRate(),
            bounds.attributeRequestBurst(),
            bounds.maxPendingRpc(),
            bounds.invalidPayload(),
            maxPollsPerAddress));
  }

  /**
   * The wait a poll asked for, in milliseconds: 0 means the default, less than the minimum is
   * raised to it (a device cannot poll in a tight loop), more than the maximum is clamped to it.
   *
   * @throws IllegalArgumentException for a negative wait
   */
  Duration pollTimeout(long requestedMillis) {
    if (requestedMillis < 0) {
      throw new IllegalArgumentException("timeout must not be negative");
    }
    if (requestedMillis == 0) {
      return defaultPollTimeout;
    }
    if (requestedMillis <= minPollTimeout.toMillis()) {
      return minPollTimeout;
    }
    return requestedMillis >= maxPollTimeout.toMillis()
        ? maxPollTimeout
        : Duration.ofMillis(requestedMillis);
  }
}
