package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageDraft;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageType;
import io.fieldline.common.query.PageData;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * ThingsBoard's OTA JSON: the package info ({@code OtaPackageInfo}), its page, the {@code
 * OTA_PACKAGE} and {@code DEVICE_PROFILE} entity ids, and the create request. Stateless.
 */
final class OtaJson {

  private OtaJson() {}

  /** {@code {"entityType":"OTA_PACKAGE","id":"<uuid>"}}. */
  static ObjectNode packageId(OtaPackageId id) {
    return entityId("OTA_PACKAGE", id.value());
  }

  /** The id in {@code {"entityType":"OTA_PACKAGE","id":..}}; 400 when it is not one. */
  static OtaPackageId packageId(JsonNode node, String field) {
    return new OtaPackageId(uuidOf(node, field, "OTA_PACKAGE"));
  }

  /**
   * ThingsBoard's {@code OtaPackageInfo}: {@code id}, {@code createdTime}, {@code title}, {@code
   * version}, {@code name} (the title), {@code type}, {@code tag}, {@code url} (always null: no
   * external packages), {@code deviceProfileId}, {@code hasData}, and with data {@code fileName},
   * {@code contentType}, {@code checksumAlgorithm}, {@code checksum}, {@code dataSize} (null
   * before), {@code additionalInfo}.
   */
  static ObjectNode info(OtaPackageInfo info) {
    ObjectNode node = JsonViews.MAPPER.createObjectNode();
    node.set("id", packageId(info.id()));
    node.put("createdTime", info.createdTime());
    node.set(
        "deviceProfileId",
        info.deviceProfileId() == null
            ? JsonViews.MAPPER.nullNode()
            : entityId("DEVICE_PROFILE", info.deviceProfileId()));
    node.put("type", info.type().name());
    node.put("title", info.title());
    node.put("version", info.version());
    node.put("tag", info.tag());
    node.putNull("url");
    node.put("hasData", info.hasData());
    OtaPackageData data = info.data();
    node.put("fileName", data == null ? null : data.fileName());
    node.put("contentType", data == null ? null : data.contentType());
    node.put("checksumAlgorithm", data == null ? null : data.checksumAlgorithm().name());
    node.put("checksum", data == null ? null : data.checksum());
    if (data == null) {
      node.putNull("dataSize");
    } else {
      node.put("dataSize", data.size());
    }
    node.put("name", info.title());
    node.set("additionalInfo", json(info.additionalInfoJson()));
    return node;
  }

  /** ThingsBoard's page of package infos. */
  static ObjectNode page(PageData<OtaPackageInfo> page) {
    ObjectNode node = JsonViews.MAPPER.createObjectNode();
    ArrayNode data = node.putArray("data");
    page.data().forEach(info -> data.add(info(info)));
    node.put("totalPages", page.totalPages());
    node.put("totalElements", page.totalElements());
    node.put("hasNext", page.hasNext());
    return node;
  }

  /**
   * The package a {@code POST /api/otaPackage} body describes: {@code title} and {@code version}
   * (required, names), {@code type} ({@code FIRMWARE} unless given), {@code tag}, {@code
   * deviceProfileId} and {@code additionalInfo} (optional). A body with an {@code id} (an update)
   * or a {@code url} (an external package) is refused: neither is supported.
   */
  static OtaPackageDraft draft(JsonNode body) {
    if (present(body.path("id"))) {
      throw new IllegalArgumentException(
          "an OTA package cannot be changed once created: delete it and create a new one");
    }
    if (present(body.path("url")) && !body.path("url").asText().isBlank()) {
      throw new IllegalArgumentException(
          "packages at an external url are not supported: upload the file instead");
    }
    String title = RequestParams.name("title", text(body, "title"));
    String version = RequestParams.name("version", text(body, "version"));
    OtaPackageType type = OtaPackageType.FIRMWARE;
    if (present(body.path("type"))) {
      try {
        type = OtaPackageType.valueOf(body.path("type").asText().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("type must be FIRMWARE or SOFTWARE");
      }
    }
    String tag =
        present(body.path("tag")) && !body.path("tag").asText().isBlank()
            ? RequestParams.name("tag", body.path("tag").asText())
            : null;
    UUID profile =
        present(body.path("deviceProfileId"))
            ? uuidOf(body.path("deviceProfileId"), "deviceProfileId", "DEVICE_PROFILE")
            : null;
    JsonNode info = body.path("additionalInfo");
    if (present(info) && !info.isObject()) {
      throw new IllegalArgumentException("additionalInfo must be a JSON object");
    }
    return new OtaPackageDraft(
        title, version, type, tag, profile, present(info) ? info.toString() : null);
  }

  /**
   * The {@code firmwareId} of a device body: empty when the body has none, an empty optional for
   * {@code null} (remove the firmware), the package otherwise.
   */
  static Optional<Optional<OtaPackageId>> firmwareId(JsonNode body) {
    JsonNode node = body.path("firmwareId");
    if (node.isMissingNode()) {
      return Optional.empty();
    }
    return Optional.of(
        node.isNull() ? Optional.empty() : Optional.of(packageId(node, "firmwareId")));
  }

  private static ObjectNode entityId(String type, UUID id) {
    ObjectNode node = JsonViews.MAPPER.createObjectNode();
    node.put("entityType", type);
    node.put("id", id.toString());
    return node;
  }

  private static UUID uuidOf(JsonNode node, String field, String entityType) {
    JsonNode uuid = node.path("id");
    if (!node.isObject()
        || !node.path("entityType").asText(entityType).equals(entityType)
        || !uuid.isTextual()) {
      throw new IllegalArgumentException(
          field + " must be {\"entityType\":\"" + entityType + "\",\"id\":\"<uuid>\"}");
    }
    try {
      return UUID.fromString(uuid.textValue());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(field + ".id must be a UUID");
    }
  }

  private static String text(JsonNode body, String field) {
    JsonNode node = body.path(field);
    if (!node.isTextual()) {
      throw new IllegalArgumentException(field + " is required and must be a string");
    }
    return node.textValue().strip();
  }

  private static boolean present(JsonNode node) {
    return !node.isMissingNode() && !node.isNull();
  }

  private static JsonNode json(@Nullable String text) {
    if (text == null) {
      return JsonViews.MAPPER.nullNode();
    }
    try {
      return JsonViews.MAPPER.readTree(text);
    } catch (java.io.IOException e) {
      return JsonViews.MAPPER.getNodeFactory().textNode(text);
    }
  }
}
