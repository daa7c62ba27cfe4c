package io.fieldline.transport.mqtt.publish;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A PUBLISH topic of the ThingsBoard device API, parsed once per message. Immutable.
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
    /**
     * {@code v2/fw/request/{id}/chunk/{n}}: a firmware chunk; {@code requestId} is the whole rest
     * of the topic ({@code {id}/chunk/{n}}), which {@link FirmwareRequests} reads.
     */
    FW_CHUNK_REQUEST,
    UNKNOWN
  }

  private static final DeviceTopic TELEMETRY_TOPIC = new DeviceTopic(Kind.TELEMETRY, "");
  private static final DeviceTopic ATTRIBUTES_TOPIC = new DeviceTopic(Kind.ATTRIBUTES, "");
  private static final DeviceTopic UNKNOWN_TOPIC = new DeviceTopic(Kind.UNKNOWN, "");

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
