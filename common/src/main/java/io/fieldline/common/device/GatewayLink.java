package io.fieldline.common.device;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * Which devices are gateways and which gateway a child device belongs to, as ThingsBoard keeps it:
 * in the device's {@code additionalInfo} object. A gateway has {@code "gateway": true} (set over
 * REST when the device is created or updated); a child device created or used by a gateway has
 * {@code "lastConnectedGateway": "<the gateway's id>"}, the gateway it was last used through.
 *
 * <p>Which gateway may act for a child is Fieldline's own key, {@code "ownerGateway": "<the
 * gateway's id>"}: written when a gateway creates the child, or by an administrator saving the
 * device over REST (the link to a gateway of a device created otherwise). A device without it but
 * with a {@code lastConnectedGateway} (a child created before owners were recorded) belongs to that
 * gateway. The one place these keys are read and written, so that the REST API, the MQTT gateway
 * sessions and whatever routes to a child through its gateway agree. Stateless.
 */
public final class GatewayLink {

  /** The {@code additionalInfo} key that makes a device a gateway when it is {@code true}. */
  public static final String GATEWAY = "gateway";

  /** The {@code additionalInfo} key holding the id of a child device's gateway. */
  public static final String LAST_CONNECTED_GATEWAY = "lastConnectedGateway";

  /** The {@code additionalInfo} key holding the id of the gateway that may act for a device. */
  public static final String OWNER_GATEWAY = "ownerGateway";

  private static final ObjectMapper MAPPER = JsonMapper.builder().build();

  private GatewayLink() {}

  /**
   * Whether {@code device} is a gateway: its additional info has {@code "gateway": true} (or the
   * text {@code "true"}).
   */
  public static boolean isGateway(Device device) {
    JsonNode info = info(device.additionalInfoJson());
    // As Jackson's asBoolean reads it: true, or the text "true" (a hand-written REST body).
    return info != null && info.path(GATEWAY).asBoolean(false);
  }

  /** The gateway {@code device} was last used through, if it is a gateway's child. */
  public static Optional<DeviceId> gatewayOf(Device device) {
    JsonNode info = info(device.additionalInfoJson());
    if (info == null || !info.path(LAST_CONNECTED_GATEWAY).isTextual()) {
      return Optional.empty();
    }
    try {
      return Optional.of(new DeviceId(UUID.fromString(info.get(LAST_CONNECTED_GATEWAY).asText())));
    } catch (IllegalArgumentException notAnId) {
      return Optional.empty();
    }
  }

  /**
   * The gateway that may act for {@code device}: its {@code ownerGateway}, else (a child created
   * before owners were recorded) its {@code lastConnectedGateway}; empty for a device no gateway
   * owns.
   */
  public static Optional<DeviceId> ownerOf(Device device) {
    JsonNode info = info(device.additionalInfoJson());
    if (info == null) {
      return Optional.empty();
    }
    JsonNode owner = info.path(OWNER_GATEWAY);
    if (owner.isMissingNode() || owner.isNull()) {
      return gatewayOf(device);
    }
    return owner.isTextual() ? id(owner.textValue()) : Optional.empty();
  }

  /**
   * Whether {@code value}, an {@code ownerGateway} value given over REST, is a device id (or null,
   * for no owner).
   */
  public static boolean isOwnerValue(JsonNode value) {
    return value.isMissingNode()
        || value.isNull()
        || (value.isTextual() && id(value.textValue()).isPresent());
  }

  /**
   * The additional info of a child device owned by and linked to {@code gateway}: {@code
   * additionalInfoJson} with {@code ownerGateway} and {@code lastConnectedGateway} set, every other
   * key kept. Additional info that is absent or not a JSON object is replaced by a new object.
   */
  public static String owned(@Nullable String additionalInfoJson, DeviceId gateway) {
    JsonNode info = info(additionalInfoJson);
    ObjectNode owned = info != null ? ((ObjectNode) info).deepCopy() : MAPPER.createObjectNode();
    owned.put(OWNER_GATEWAY, gateway.value().toString());
    owned.put(LAST_CONNECTED_GATEWAY, gateway.value().toString());
    return owned.toString();
  }

  /**
   * Whether {@code device}'s additional info names {@code gateway} as its owner and last gateway.
   */
  public static boolean isOwnedBy(Device device, DeviceId gateway) {
    JsonNode info = info(device.additionalInfoJson());
    String id = gateway.value().toString();
    return info != null
        && id.equals(info.path(OWNER_GATEWAY).asText(null))
        && id.equals(info.path(LAST_CONNECTED_GATEWAY).asText(null));
  }

  private static Optional<DeviceId> id(String text) {
    try {
      return Optional.of(new DeviceId(UUID.fromString(text)));
    } catch (IllegalArgumentException notAnId) {
      return Optional.empty();
    }
  }

  /**
   * The additional info of a child device linked to {@code gateway}: {@code additionalInfoJson}
   * with {@code lastConnectedGateway} set, every other key kept. Additional info that is absent or
   * not a JSON object (the REST API stores only objects) is replaced by a new object.
   */
  public static String linked(@Nullable String additionalInfoJson, DeviceId gateway) {
    JsonNode info = info(additionalInfoJson);
    ObjectNode linked = info != null ? ((ObjectNode) info).deepCopy() : MAPPER.createObjectNode();
    linked.put(LAST_CONNECTED_GATEWAY, gateway.value().toString());
    return linked.toString();
  }

  // The additional info as an object, or null when there is none or it is not a JSON object.
  private static @Nullable JsonNode info(@Nullable String additionalInfoJson) {
    if (additionalInfoJson == null || additionalInfoJson.isBlank()) {
      return null;
    }
    try {
      JsonNode node = MAPPER.readTree(additionalInfoJson);
      return node != null && node.isObject() ? node : null;
    } catch (JsonProcessingException notJson) {
      return null;
    }
  }
}
