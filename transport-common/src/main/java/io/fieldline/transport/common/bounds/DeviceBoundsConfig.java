package io.fieldline.transport.common.bounds;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;

/**
 * The bounds both device transports apply, so that a device meets the same limits over MQTT and
 * over HTTP. They keep their first home's key names under {@code fieldline.mqtt} (and the {@code
 * FIELDLINE_MQTT_*} variables deployments set); this module's {@code reference.conf} documents
 * them.
 *
 * @param maxPacketSize largest MQTT packet in bytes, fixed header included (the Maximum Packet Size
 *     of MQTT 5 CONNACK); largest HTTP upload body ({@code max-packet-size})
 * @param maxInflight MQTT: unacknowledged PUBLISHes per connection before reading pauses; HTTP:
 *     uploads of one device being stored at once ({@code max-inflight})
 * @param clientRpcRate client-side RPC requests per second per connection or device; 0 = no limit
 *     ({@code client-rpc-rate})
 * @param clientRpcBurst client-side RPC requests answered at once, on top of the rate ({@code
 *     client-rpc-burst})
 * @param attributeRequestRate attribute requests per second per connection or device; 0 = no limit
 *     ({@code attribute-request-rate})
 * @param attributeRequestBurst attribute requests answered at once, on top of the rate; also the
 *     most attribute reads one MQTT connection has outstanding ({@code attribute-request-burst})
 * @param maxPendingRpc server-side RPC requests one MQTT session, or one device's HTTP polls, hold
 *     from being taken until they end ({@code downlink.max-pending-rpc})
 * @param invalidPayload what to do with a payload that is not valid ThingsBoard JSON ({@code
 *     invalid-payload})
 */
public record DeviceBoundsConfig(
    int maxPacketSize,
    int maxInflight,
    int clientRpcRate,
    int clientRpcBurst,
    int attributeRequestRate,
    int attributeRequestBurst,
    int maxPendingRpc,
    InvalidPayloadPolicy invalidPayload) {

  /** Where the keys sit. */
  public static final String PATH = "fieldline.mqtt";

  /** Reads and validates the shared bounds; reports every invalid key at once. */
  public static DeviceBoundsConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, PATH);
    return r.validated(read(r));
  }

  /**
   * Reads the shared bounds with {@code reader} (of {@link #PATH}), whose owner reports their
   * errors together with its own: the MQTT transport reads its other keys with the same reader.
   */
  public static DeviceBoundsConfig read(ConfigReader reader) {
    return new DeviceBoundsConfig(
        // MQTT's remaining length field tops out at 268,435,455 bytes.
        (int) reader.bytes("max-packet-size", 64, 268_435_455),
        reader.integer("max-inflight", 1, 65535),
        reader.integer("client-rpc-rate", 0, 1_000_000),
        reader.integer("client-rpc-burst", 1),
        reader.integer("attribute-request-rate", 0, 1_000_000),
        reader.integer("attribute-request-burst", 1, 65535),
        reader.integer("downlink.max-pending-rpc", 1, 1_000_000),
        reader.oneOf("invalid-payload", InvalidPayloadPolicy.class));
  }
}
