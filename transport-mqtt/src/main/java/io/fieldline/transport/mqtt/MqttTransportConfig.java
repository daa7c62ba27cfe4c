package io.fieldline.transport.mqtt;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The MQTT transport's settings, read once from {@code fieldline.mqtt} (see this module's {@code
 * reference.conf} for each key's meaning and environment variable).
 *
 * @param host address to bind
 * @param port TCP port; 0 picks a free port (tests)
 * @param workerThreads Netty I/O threads; 0 = number of cores
 * @param maxPacketSize largest accepted MQTT packet in bytes (fixed header excluded)
 * @param maxClientIdLength longest accepted client identifier
 * @param maxConnections open connections beyond which new ones are closed at once
 * @param connectTimeout time a new connection has to send CONNECT
 * @param maxInflight unacknowledged PUBLISHes per connection before reading pauses
 * @param inflightLowWater reading resumes when the unacknowledged count falls to this
 * @param maxQueuedBeforeConnack PUBLISHes accepted while CONNECT is being authenticated
 * @param sessionExpiry how long a CleanSession=0 session outlives its connection
 * @param invalidPayload what to do with a payload that is not valid ThingsBoard JSON
 */
public record MqttTransportConfig(
    String host,
    int port,
    int workerThreads,
    int maxPacketSize,
    int maxClientIdLength,
    int maxConnections,
    Duration connectTimeout,
    int maxInflight,
    int inflightLowWater,
    int maxQueuedBeforeConnack,
    Duration sessionExpiry,
    InvalidPayloadPolicy invalidPayload) {

  /** The reaction to an unparseable telemetry or attributes payload. */
  public enum InvalidPayloadPolicy {
    /** PUBACK, and keep the raw bytes in the dead-letter table (the default). */
    DEAD_LETTER,
    /** Close the connection without PUBACK, as ThingsBoard 2.x does. */
    CLOSE
  }

  /** Reads and validates {@code fieldline.mqtt}; reports every invalid key at once. */
  public static MqttTransportConfig from(Config root) {
    Config c = root.getConfig("fieldline.mqtt");
    List<String> errors = new ArrayList<>();
    // Read as long: an int cast would turn 4 GiB + 100 B into 100 B and pass validation.
    long maxPacketSize = read(errors, "max-packet-size", c::getBytes, 65536L);
    MqttTransportConfig config =
        new MqttTransportConfig(
            read(errors, "host", c::getString, ""),
            read(errors, "port", c::getInt, 0),
            read(errors, "worker-threads", c::getInt, 0),
            (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, maxPacketSize)),
            read(errors, "max-client-id-length", c::getInt, 256),
            read(errors, "max-connections", c::getInt, 1),
            read(errors, "connect-timeout", c::getDuration, Duration.ofSeconds(1)),
            read(errors, "max-inflight", c::getInt, 65535),
            read(errors, "inflight-low-water", c::getInt, 0),
            read(errors, "max-queued-before-connack", c::getInt, 0),
            read(errors, "session-expiry", c::getDuration, Duration.ZERO),
            policy(read(errors, "invalid-payload", c::getString, "dead-letter"), errors));
    config.validate(errors);
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid fieldline.mqtt configuration: " + String.join("; ", errors));
    }
    return config;
  }

  /**
   * Reads one key; a missing key or a value of the wrong type is recorded in {@code errors} and
   * {@code fallback} (a value that passes validation) is returned, so every error is reported.
   */
  private static <T> T read(
      List<String> errors, String key, Function<String, T> getter, T fallback) {
    try {
      return getter.apply(key);
    } catch (ConfigException e) {
      errors.add(e.getMessage());
      return fallback;
    }
  }

  private static InvalidPayloadPolicy policy(String value, List<String> errors) {
    try {
      return InvalidPayloadPolicy.valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      errors.add("invalid-payload must be dead-letter or close, got '" + value + "'");
      return InvalidPayloadPolicy.DEAD_LETTER;
    }
  }

  private void validate(List<String> errors) {
    if (port < 0 || port > 65535) {
      errors.add("port must be 0..65535, got " + port);
    }
    if (workerThreads < 0) {
      errors.add("worker-threads must be >= 0");
    }
    // MQTT's remaining length field tops out at 268,435,455 bytes.
    if (maxPacketSize < 64 || maxPacketSize > 268_435_455) {
      errors.add("max-packet-size must be 64 B .. 256 MiB, got " + maxPacketSize);
    }
    if (maxClientIdLength < 23) {
      errors.add("max-client-id-length must be >= 23 (MQTT 3.1.1 §3.1.3.1)");
    }
    if (maxConnections < 1) {
      errors.add("max-connections must be >= 1");
    }
    if (connectTimeout.isNegative() || connectTimeout.isZero()) {
      errors.add("connect-timeout must be positive");
    }
    if (maxInflight < 1 || maxInflight > 65535) {
      errors.add("max-inflight must be 1..65535, got " + maxInflight);
    }
    if (inflightLowWater < 0 || inflightLowWater >= maxInflight) {
      errors.add("inflight-low-water must be >= 0 and < max-inflight, got " + inflightLowWater);
    }
    if (maxQueuedBeforeConnack < 0) {
      errors.add("max-queued-before-connack must be >= 0");
    }
    if (sessionExpiry.isNegative()) {
      errors.add("session-expiry must not be negative");
    }
  }

  public MqttTransportConfig withPort(int newPort) {
    return new MqttTransportConfig(
        host,
        newPort,
        workerThreads,
        maxPacketSize,
        maxClientIdLength,
        maxConnections,
        connectTimeout,
        maxInflight,
        inflightLowWater,
        maxQueuedBeforeConnack,
        sessionExpiry,
        invalidPayload);
  }
}
