package io.fieldline.transport.mqtt.publish;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A PUBLISH topic of the ThingsBoard device API (and of its gateway API), parsed once per message.
 * Immutable.
 *
 * @param kind what the topic is for
 * @param requestId the trailing id of request/response topics, empty otherwise
 */
record DeviceTopic(Kind kind, String requestId) {

  /** Where the answer to {@code v1/devices/me/rpc/request/{id}} goes, followed by the id. */
  static final String RPC_RESPONSE_PREFIX = "v1/devices/me/rpc/response/";

  private static final String TELEMETRY = "v1/devices/me/telemetry";
  private static final String ATTRIBUTES = "v1/devices/me/attributes";
  private static final String ATTRIBUTES_REQUEST_PREFIX = "v1/devices/me/attributes/request/";
  private static final String RPC_REQUEST_PREFIX = "v1/devices/me/rpc/request/";
  private static final String GATEWAY_PREFIX = "v1/gateway/";
  private static final String FW_REQUEST_PREFIX = "v2/fw/request/";
  private static final String FW_CHUNK = "/chunk/";

  /** The topics a device may publish to. */
  enum Kind {
    TELEMETRY,
    ATTRIBUTES,
    /** {@code v1/devices/me/attributes/request/{id}}: read attribute values. */
    ATTRIBUTES_REQUEST,
    /** {@code v1/devices/me/rpc/request/{id}}: a client-side RPC. */
    RPC_REQUEST,
    /** {@code v1/devices/me/rpc/response/{id}}: the answer to a server-side RPC. */
    RPC_RESPONSE,
    /** {@code v1/gateway/connect}: a gateway announces a child device. */
    GATEWAY_CONNECT,
    /** {@code v1/gateway/disconnect}: a gateway lets a child device go. */
    GATEWAY_DISCONNECT,
    /** {@code v1/gateway/telemetry}: time series of a gateway's child devices. */
    GATEWAY_TELEMETRY,
    /** {@code v1/gateway/attributes}: client-side attributes of a gateway's child devices. */
    GATEWAY_ATTRIBUTES,
    /** {@code v1/gateway/attributes/request}: a gateway reads a child's attributes. */
    GATEWAY_ATTRIBUTES_REQUEST,
    /** {@code v1/gateway/rpc}: a gateway answers a server-side RPC to a child. */
    GATEWAY_RPC,
    /**
     * {@code v2/fw/request/{id}/chunk/{n}}: a firmware chunk; {@code requestId} is the whole rest
     * of the topic ({@code {id}/chunk/{n}}), which {@link FirmwareRequests} reads.
     */
    FW_CHUNK_REQUEST,
    UNKNOWN;

    /** Whether this is a topic of the gateway API, served only to gateways. */
    boolean isGateway() {
      return this == GATEWAY_CONNECT
          || this == GATEWAY_DISCONNECT
          || this == GATEWAY_TELEMETRY
          || this == GATEWAY_ATTRIBUTES
          || this == GATEWAY_ATTRIBUTES_REQUEST
          || this == GATEWAY_RPC;
    }
  }

  private static final DeviceTopic TELEMETRY_TOPIC = new DeviceTopic(Kind.TELEMETRY, "");
  private static final DeviceTopic ATTRIBUTES_TOPIC = new DeviceTopic(Kind.ATTRIBUTES, "");
  private static final DeviceTopic UNKNOWN_TOPIC = new DeviceTopic(Kind.UNKNOWN, "");
  private static final DeviceTopic GATEWAY_CONNECT = new DeviceTopic(Kind.GATEWAY_CONNECT, "");
  private static final DeviceTopic GATEWAY_DISCONNECT =
      new DeviceTopic(Kind.GATEWAY_DISCONNECT, "");
  private static final DeviceTopic GATEWAY_TELEMETRY = new DeviceTopic(Kind.GATEWAY_TELEMETRY, "");
  private static final DeviceTopic GATEWAY_ATTRIBUTES =
      new DeviceTopic(Kind.GATEWAY_ATTRIBUTES, "");
  private static final DeviceTopic GATEWAY_ATTRIBUTES_REQUEST =
      new DeviceTopic(Kind.GATEWAY_ATTRIBUTES_REQUEST, "");
  private static final DeviceTopic GATEWAY_RPC = new DeviceTopic(Kind.GATEWAY_RPC, "");

  DeviceTopic {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(requestId, "requestId");
  }

  /** Parses a PUBLISH topic name; anything outside the device API is {@link Kind#UNKNOWN}. */
  static DeviceTopic parse(String topic) {
    // Telemetry first: it is almost every message.
    if (TELEMETRY.equals(topic)) {
      return TELEMETRY_TOPIC;
    }
    if (ATTRIBUTES.equals(topic)) {
      return ATTRIBUTES_TOPIC;
    }
    if (topic.startsWith(GATEWAY_PREFIX)) {
      return gateway(topic.substring(GATEWAY_PREFIX.length()));
    }
    DeviceTopic withId = withId(topic, RPC_REQUEST_PREFIX, Kind.RPC_REQUEST);
    if (withId == null) {
      withId = withId(topic, RPC_RESPONSE_PREFIX, Kind.RPC_RESPONSE);
    }
    if (withId == null) {
      withId = withId(topic, ATTRIBUTES_REQUEST_PREFIX, Kind.ATTRIBUTES_REQUEST);
    }
    // v2/fw/request/{id}/chunk/{n}; anything else under v2/fw/request/ is an unknown topic.
    if (withId == null
        && topic.startsWith(FW_REQUEST_PREFIX)
        && topic.indexOf(FW_CHUNK, FW_REQUEST_PREFIX.length()) > FW_REQUEST_PREFIX.length()) {
      withId = new DeviceTopic(Kind.FW_CHUNK_REQUEST, topic.substring(FW_REQUEST_PREFIX.length()));
    }
    return withId == null ? UNKNOWN_TOPIC : withId;
  }

  // v1/gateway/claim is not served: unknown.
  private static DeviceTopic gateway(String rest) {
    return switch (rest) {
      case "telemetry" -> GATEWAY_TELEMETRY;
      case "attributes" -> GATEWAY_ATTRIBUTES;
      case "connect" -> GATEWAY_CONNECT;
      case "disconnect" -> GATEWAY_DISCONNECT;
      case "attributes/request" -> GATEWAY_ATTRIBUTES_REQUEST;
      case "rpc" -> GATEWAY_RPC;
      default -> UNKNOWN_TOPIC;
    };
  }

  private static @Nullable DeviceTopic withId(String topic, String prefix, Kind kind) {
    if (topic.length() > prefix.length() && topic.startsWith(prefix)) {
      String id = topic.substring(prefix.length());
      if (id.indexOf('/') < 0) {
        return new DeviceTopic(kind, id);
      }
    }
    return null;
  }
}
