package io.fieldline.server.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.StoredCredentials;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * ThingsBoard's {@code DeviceCredentials} JSON, both ways: {@code {"id":{"id":..},"createdTime":..,
 * "deviceId":{"entityType":"DEVICE","id":..},"credentialsType":..,"credentialsId":..,
 * "credentialsValue":..}}. By type: ACCESS_TOKEN has the token as {@code credentialsId} and no
 * value; MQTT_BASIC has a JSON object as a string in {@code credentialsValue} ({@code
 * {"clientId":..,"userName":..,"password":..}}), shown with a null password since only its hash is
 * kept; X509_CERTIFICATE has the PEM as the value and its SHA-256 fingerprint as the id. In a
 * request, {@code credentialsId} counts only for ACCESS_TOKEN (the server derives the others).
 * Stateless; bad input throws {@link IllegalArgumentException} (400).
 */
final class CredentialsJson {

  private CredentialsJson() {}

  /** The GET shape. */
  static ObjectNode view(StoredCredentials stored) {
    ObjectNode node = JsonViews.MAPPER.createObjectNode();
    // One credential per device: the credential's id is the device's.
    node.putObject("id").put("id", stored.deviceId().toString());
    node.put("createdTime", stored.createdTime());
    node.set("deviceId", JsonViews.deviceId(stored.deviceId()));
    DeviceCredentials credentials = stored.credentials();
    node.put("credentialsType", credentials.type().name());
    node.put("credentialsId", stored.credentialsId());
    if (credentials instanceof DeviceCredentials.MqttBasic basic) {
      ObjectNode value = JsonViews.MAPPER.createObjectNode();
      value.put("clientId", basic.clientId());
      value.put("userName", basic.userName());
      value.putNull("password");
      node.put("credentialsValue", value.toString());
    } else if (credentials instanceof DeviceCredentials.X509Certificate certificate) {
      node.put("credentialsValue", certificate.pem());
    } else {
      node.putNull("credentialsValue");
    }
    return node;
  }

  /** The device a {@code POST /api/device/credentials} body is about: {@code deviceId.id}. */
  static DeviceId deviceId(JsonNode body) {
    String id = body.path("deviceId").path("id").asText("");
    try {
      return DeviceId.parse(id);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("deviceId.id must be a device UUID");
    }
  }

  /** The credential a request body describes. */
  static DeviceCredentials credentials(JsonNode body) {
    CredentialsType type = type(body.path("credentialsType"));
    return switch (type) {
      case ACCESS_TOKEN ->
          new DeviceCredentials.AccessToken(text(body.path("credentialsId"), "credentialsId"));
      case MQTT_BASIC -> basic(body.path("credentialsValue"));
      case X509_CERTIFICATE -> certificate(text(body.path("credentialsValue"), "credentialsValue"));
    };
  }

  private static DeviceCredentials.X509Certificate certificate(String pem) {
    if (pem.isBlank()) {
      throw new IllegalArgumentException(
          "X509_CERTIFICATE needs the device's PEM certificate as credentialsValue");
    }
    return DeviceCredentials.X509Certificate.parse(pem);
  }

  private static CredentialsType type(JsonNode node) {
    if (!node.isTextual()) {
      throw new IllegalArgumentException(
          "credentialsType must be one of " + Arrays.toString(CredentialsType.values()));
    }
    try {
      return CredentialsType.valueOf(node.asText(""));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "credentialsType must be one of " + Arrays.toString(CredentialsType.values()));
    }
  }

  // ThingsBoard sends the value as a JSON string; an object is accepted too.
  private static DeviceCredentials.MqttBasic basic(JsonNode value) {
    JsonNode fields = value;
    if (value.isTextual()) {
      try {
        fields = JsonViews.MAPPER.readTree(value.asText());
      } catch (JsonProcessingException e) {
        fields = null;
      }
    }
    if (fields == null || !fields.isObject()) {
      throw new IllegalArgumentException(
          "MQTT_BASIC credentialsValue must be a JSON object with clientId, userName, password");
    }
    return new DeviceCredentials.MqttBasic(
        optionalText(fields, "clientId"),
        optionalText(fields, "userName"),
        optionalText(fields, "password"));
  }

  private static @Nullable String optionalText(JsonNode object, String field) {
    JsonNode node = object.path(field);
    if (node.isMissingNode() || node.isNull()) {
      return null;
    }
    if (!node.isTextual()) {
      throw new IllegalArgumentException("MQTT_BASIC " + field + " must be a string");
    }
    return node.asText();
  }

  // Absent or null: empty (each type says what it needs); any other non-string is refused rather
  // than read as empty or as its JSON text.
  private static String text(JsonNode node, String field) {
    if (node.isMissingNode() || node.isNull()) {
      return "";
    }
    if (!node.isTextual()) {
      throw new IllegalArgumentException(field + " must be a string");
    }
    return node.asText();
  }
}
