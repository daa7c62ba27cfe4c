package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.device.GatewayLink;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.fleet.ota.FirmwareAssignments;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.jspecify.annotations.Nullable;

/**
 * Device management, ThingsBoard-shaped: {@code POST /api/device[?accessToken=]} (create, or update
 * when the body carries the device's {@code id}), {@code GET|DELETE /api/device/{id}}, {@code GET
 * /api/tenant/devices?deviceName=} (look-up by name), {@code GET
 * /api/tenant/devices?pageSize=&page=&textSearch=&sortProperty=&sortOrder=} (one page of the list,
 * with its totals), the newer clients' {@code GET /api/tenant/device?deviceName=} and {@code GET
 * /api/devices?deviceIds=}, and Fieldline's bulk call for load tests {@code POST
 * /api/fieldline/devices/bulk}. Credentials are {@link CredentialsRoutes}'. A delete answers once
 * its credential is revoked on every node that could be told ({@link CredentialsRevocation}),
 * whatever its outcome (a failed one may have been applied).
 *
 * <p>With the device profiles ({@link DeviceProfileStore}), a device is read with its {@code
 * deviceProfileId}, and a save may name one ({@code {"entityType":"DEVICE_PROFILE","id":..}}): the
 * profile must exist (400 otherwise) and the device gets it once it is created or updated; a save
 * without one (absent or null) keeps the device's profile. With OTA packages, a device is read with
 * its {@code firmwareId} and a save may assign one ({@link DeviceFirmwareJson}).
 */
final class DeviceRoutes extends AllDirectives {

  /** Largest bulk size accepted. */
  static final int MAX_BULK = 50_000;

  /**
   * Most ids one {@code GET /api/devices?deviceIds=} reads (one registry read each); about what a
   * request line of Pekko's 2 KiB limit holds anyway (37 characters per id).
   */
  static final int MAX_IDS = 50;

  private static final int BULK_PARALLELISM = 32;

  private final CredentialRefusals refusals;
  private final DeviceRegistry registry;
  private final CredentialsRevocation revocation;
  private final @Nullable DeviceProfileStore profiles;
  private final DeviceFirmwareJson firmware;

  /** Devices without profiles or firmware: no {@code deviceProfileId} or {@code firmwareId}. */
  DeviceRoutes(DeviceRegistry registry, CredentialsRevocation revocation) {
    this(
        registry,
        revocation,
        null,
        DeviceFirmwareJson.NONE,
        new CredentialRefusals(new SimpleMeterRegistry()));
  }

  /** Devices with their profile and firmware, each read and written with the device. */
  DeviceRoutes(
      DeviceRegistry registry,
      CredentialsRevocation revocation,
      DeviceProfileStore profiles,
      FirmwareAssignments firmwareAssignments,
      CredentialRefusals refusals) {
    this(registry, revocation, profiles, new DeviceFirmwareJson(firmwareAssignments), refusals);
  }

  private DeviceRoutes(
      DeviceRegistry registry,
      CredentialsRevocation revocation,
      @Nullable DeviceProfileStore profiles,
      DeviceFirmwareJson firmware,
      CredentialRefusals refusals) {
    this.refusals = refusals;
    this.registry = registry;
    this.revocation = revocation;
    this.profiles = profiles;
    this.firmware = firmware;
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return concat(
        path(
            PathMatchers.segment("device"),
            () ->
                post(
                    () ->
                        parameterOptional(
                            "accessToken",
                            token ->
                                entity(
                                    Unmarshaller.entityToString(),
                                    body -> HttpJson.reply(() -> save(body, token)))))),
        pathPrefix(
            PathMatchers.segment("device").slash(PathMatchers.uuidSegment()),
            uuid -> {
              DeviceId id = new DeviceId(uuid);
              return pathEnd(
                  () ->
                      concat(
                          get(() -> HttpJson.reply(() -> find(id))),
                          delete(() -> HttpJson.reply(() -> delete(id)))));
            }),
        path(
            PathMatchers.segment("tenant").slash("devices"),
            () -> get(() -> parameterMap(params -> HttpJson.reply(() -> list(params))))),
        path(
            PathMatchers.segment("tenant").slash("device"),
            () ->
                get(
                    () ->
                        parameterMap(
                            params -> HttpJson.reply(() -> byName(params.get("deviceName")))))),
        path(
            PathMatchers.segment("devices"),
            () ->
                get(
                    () ->
                        parameterMap(
                            params -> HttpJson.reply(() -> byIds(params.get("deviceIds")))))),
        path(
            PathMatchers.segment("fieldline").slash("devices").slash("bulk"),
            () ->
                post(
                    () ->
                        entity(
                            Unmarshaller.entityToString(),
                            body -> HttpJson.reply(() -> bulk(body))))));
  }

  private CompletionStage<HttpResponse> delete(DeviceId id) {
    return revocation
        .revokeAfter(id, registry.delete(id))
        .thenApply(
            deleted ->
                deleted
                    ? HttpJson.ok(JsonViews.MAPPER.createObjectNode())
                    : HttpJson.notFound("device"));
  }

  private CompletionStage<HttpResponse> find(DeviceId id) {
    return registry.findById(id).thenCompose(this::deviceOr404);
  }

  /** The device with its profile and firmware (when they are served), or 404. */
  private CompletionStage<HttpResponse> deviceOr404(Optional<Device> found) {
    if (found.isEmpty()) {
      return CompletableFuture.completedFuture(HttpJson.notFound("device"));
    }
    Device device = found.get();
    DeviceProfileStore store = profiles;
    CompletionStage<ObjectNode> view =
        store == null
            ? CompletableFuture.completedFuture(JsonViews.device(device))
            : store
                .profileOf(device.id())
                .thenApply(profile -> JsonViews.device(device, profile.orElse(null)));
    return view.thenCompose(node -> firmware.render(device, node)).thenApply(HttpJson::ok);
  }

  /**
   * ThingsBoard's save: an update when the body has the device's {@code id}, else a create. An
   * update replaces name, type, label and additional info with the body's (as ThingsBoard does: an
   * absent label or additionalInfo becomes none, an absent type {@code "default"}).
   */
  private CompletionStage<HttpResponse> save(String body, Optional<String> accessToken) {
    JsonNode json = HttpJson.parseObject(body);
    DeviceFields fields = DeviceFields.of(json);
    DeviceProfileId profile = profileId(json.path("deviceProfileId"));
    // A firmwareId is checked before anything is saved, and assigned once the device is.
    return firmware
        .check(json)
        .thenCompose(checked -> saveDevice(json, fields, accessToken, profile))
        .thenCompose(saved -> firmware.apply(saved, json))
        .thenCompose(this::deviceOr404);
  }

  private CompletionStage<Optional<Device>> saveDevice(
      JsonNode json,
      DeviceFields fields,
      Optional<String> accessToken,
      @Nullable DeviceProfileId profile) {
    JsonNode id = json.path("id");
    if (!id.isMissingNode() && !id.isNull()) {
      DeviceId device = deviceId(id);
      return profileExists(profile)
          .thenCompose(exists -> registry.update(fields.update(device)))
          .thenCompose(updated -> withProfile(updated, profile));
    }
    Optional<String> token =
        accessToken
            .filter(t -> !t.isBlank())
            .map(t -> refusals.checkToken(RequestParams.name("accessToken", t)));
    CompletionStage<Device> created =
        profileExists(profile)
            .thenCompose(exists -> registry.create(fields.name(), fields.type(), token));
    CompletionStage<Optional<Device>> saved =
        fields.label() == null && fields.additionalInfoJson() == null
            ? created.thenApply(Optional::of)
            // The create port takes no label or additional info: set them on the new device
            // right away.
            : created.thenCompose(device -> registry.update(fields.update(device.id())));
    return saved.thenCompose(device -> withProfile(device, profile));
  }

  /**
   * The {@code deviceProfileId} of a save, or null when absent or null.
   *
   * @throws IllegalArgumentException when it is malformed, or profiles are not served
   */
  private @Nullable DeviceProfileId profileId(JsonNode node) {
    if (node.isMissingNode() || node.isNull()) {
      return null;
    }
    if (profiles == null) {
      throw new IllegalArgumentException("device profiles are not available");
    }
    return DeviceProfileRoutes.profileId(node);
  }

  // Checked before the device is written, so a wrong id changes nothing.
  private CompletionStage<Void> profileExists(@Nullable DeviceProfileId profile) {
    DeviceProfileStore store = profiles;
    if (profile == null || store == null) {
      return CompletableFuture.completedFuture(null);
    }
    return store
        .findById(profile)
        .thenApply(
            found -> {
              if (found.isEmpty()) {
                throw new IllegalArgumentException("device profile " + profile + " not found");
              }
              return null;
            });
  }

  private CompletionStage<Optional<Device>> withProfile(
      Optional<Device> device, @Nullable DeviceProfileId profile) {
    DeviceProfileStore store = profiles;
    if (device.isEmpty() || profile == null || store == null) {
      return CompletableFuture.completedFuture(device);
    }
    return store
        .assign(device.get().id(), profile)
        .thenApply(assigned -> assigned ? device : Optional.<Device>empty());
  }

  /** ThingsBoard's entity id, {@code {"entityType":"DEVICE","id":"<uuid>"}}. */
  private static DeviceId deviceId(JsonNode id) {
    String type = id.path("entityType").asText("DEVICE");
    JsonNode uuid = id.path("id");
    if (!id.isObject() || !type.equals("DEVICE") || !uuid.isTextual()) {
      throw new IllegalArgumentException(
          "id must be {\"entityType\":\"DEVICE\",\"id\":\"<uuid>\"}");
    }
    try {
      return new DeviceId(UUID.fromString(uuid.textValue()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("id.id must be a UUID");
    }
  }

  /**
   * {@code GET /api/tenant/device?deviceName=} (the path of ThingsBoard's newer clients; the older
   * {@code /api/tenant/devices?deviceName=} is {@link #list}'s): that device or 404.
   */
  private CompletionStage<HttpResponse> byName(@Nullable String deviceName) {
    if (deviceName == null) {
      throw new IllegalArgumentException("deviceName is required");
    }
    return registry
        .findByName(RequestParams.name("deviceName", deviceName))
        .thenCompose(this::deviceOr404);
  }

  /**
   * {@code GET /api/devices?deviceIds=a,b,…}: the devices among those ids, in the order asked, each
   * with its profile; ids of no device are left out (ThingsBoard's answer). At most {@value
   * #MAX_IDS} ids.
   */
  private CompletionStage<HttpResponse> byIds(@Nullable String deviceIds) {
    if (deviceIds == null || deviceIds.isBlank()) {
      throw new IllegalArgumentException("deviceIds is required");
    }
    List<DeviceId> ids = new ArrayList<>();
    for (String part : deviceIds.split(",", -1)) {
      String id = part.trim();
      if (!RequestParams.isUuid(id)) {
        throw new IllegalArgumentException("deviceIds must be UUIDs separated by commas");
      }
      if (ids.size() == MAX_IDS) {
        throw new IllegalArgumentException("at most " + MAX_IDS + " deviceIds per request");
      }
      ids.add(new DeviceId(UUID.fromString(id)));
    }
    List<CompletableFuture<Optional<Device>>> reads =
        ids.stream().map(id -> registry.findById(id).toCompletableFuture()).toList();
    return CompletableFuture.allOf(reads.toArray(CompletableFuture<?>[]::new))
        .thenCompose(
            all -> {
              List<Device> found =
                  reads.stream().map(CompletableFuture::join).flatMap(Optional::stream).toList();
              DeviceProfileStore store = profiles;
              CompletionStage<Map<DeviceId, DeviceProfileId>> profilesOf =
                  store == null
                      ? CompletableFuture.completedFuture(Map.of())
                      : store.profilesOf(found.stream().map(Device::id).toList());
              return profilesOf.thenApply(
                  byDevice -> {
                    ArrayNode array = JsonViews.MAPPER.createArrayNode();
                    found.forEach(
                        device -> array.add(JsonViews.device(device, byDevice.get(device.id()))));
                    return HttpJson.ok(array);
                  });
            });
  }

  /** {@code ?deviceName=}: that device or 404; otherwise one page of the device list. */
  private CompletionStage<HttpResponse> list(Map<String, String> params) {
    String deviceName = params.get("deviceName");
    if (deviceName != null) {
      return byName(deviceName);
    }
    DeviceProfileStore store = profiles;
    return registry
        .page(RequestParams.devicePage(params))
        .thenCompose(
            page ->
                store == null
                    ? CompletableFuture.completedFuture(HttpJson.ok(JsonViews.devicePage(page)))
                    : store
                        .profilesOf(page.data().stream().map(Device::id).toList())
                        .thenApply(found -> HttpJson.ok(JsonViews.devicePage(page, found))));
  }

  /**
   * Creates {@code count} devices named {@code namePrefix + i} whose access token is the same as
   * the name unless {@code tokenPrefix} is given. Re-running it returns the existing devices
   * instead of duplicating them, so load-test provisioning is repeatable.
   */
  private CompletionStage<HttpResponse> bulk(String body) {
    JsonNode json = HttpJson.parseObject(body);
    JsonNode countNode = json.path("count");
    if (!countNode.isInt() || countNode.asInt() < 1 || countNode.asInt() > MAX_BULK) {
      throw new IllegalArgumentException("count must be an integer in 1.." + MAX_BULK);
    }
    int count = countNode.asInt();
    // Room for the largest index after each prefix, so every name and token fits.
    int room = RequestParams.MAX_NAME_LENGTH - Integer.toString(count - 1).length();
    String prefix = RequestParams.prefix("namePrefix", json.path("namePrefix").asText(""), room);
    String tokenPrefix =
        RequestParams.prefix("tokenPrefix", json.path("tokenPrefix").asText(prefix), room);
    String type = RequestParams.name("type", json.path("type").asText("default"));
    List<CompletableFuture<Device>> results = new ArrayList<>(count);
    // BULK_PARALLELISM sequential chains: bounded concurrency without blocking a thread.
    List<CompletableFuture<Void>> chains = new ArrayList<>();
    for (int lane = 0; lane < Math.min(BULK_PARALLELISM, count); lane++) {
      chains.add(CompletableFuture.completedFuture(null));
    }
    for (int i = 0; i < count; i++) {
      int index = i;
      CompletableFuture<Device> result = new CompletableFuture<>();
      results.add(result);
      int lane = i % chains.size();
      chains.set(
          lane,
          chains
              .get(lane)
              .thenCompose(
                  ignored ->
                      createOrGetSafely(prefix + index, tokenPrefix + index, type)
                          .handle(
                              (device, error) -> {
                                if (error != null) {
                                  result.completeExceptionally(error);
                                } else {
                                  result.complete(device);
                                }
                                return null;
                              })));
    }
    return CompletableFuture.allOf(results.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            done -> {
              ArrayNode array = JsonViews.MAPPER.createArrayNode();
              for (CompletableFuture<Device> result : results) {
                Device device = result.join();
                ObjectNode node = array.addObject();
                node.put("name", device.name());
                node.put("id", device.id().toString());
                node.put("accessToken", device.accessToken());
              }
              return HttpJson.ok(array);
            });
  }

  // A synchronous throw would end the lane without completing its results: the request would hang.
  private CompletionStage<Device> createOrGetSafely(String name, String token, String type) {
    try {
      return createOrGet(name, token, type);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private CompletionStage<Device> createOrGet(String name, String token, String type) {
    return registry
        .create(name, type, Optional.of(token))
        .handle(
            (device, error) -> {
              if (error == null) {
                return CompletableFuture.completedFuture(device);
              }
              Throwable cause = error instanceof CompletionException ? error.getCause() : error;
              if (cause instanceof DeviceConflictException) {
                return registry
                    .findByToken(token)
                    .thenApply(
                        found ->
                            found
                                .filter(existing -> existing.name().equals(name))
                                .orElseThrow(
                                    () ->
                                        new DeviceConflictException(
                                            "device "
                                                + name
                                                + " or token "
                                                + token
                                                + " belongs to another device")));
              }
              return CompletableFuture.<Device>failedFuture(cause);
            })
        .thenCompose(Function.identity());
  }

  /** The editable fields of a device in a request body, validated. */
  private record DeviceFields(
      String name, String type, @Nullable String label, @Nullable String additionalInfoJson) {

    static DeviceFields of(JsonNode json) {
      String name = RequestParams.name("device name", json.path("name").asText("").trim());
      String type = json.path("type").asText("default");
      type = type.isBlank() ? "default" : RequestParams.name("type", type);
      return new DeviceFields(
          name, type, label(json.path("label")), info(json.path("additionalInfo")));
    }

    DeviceUpdate update(DeviceId id) {
      return new DeviceUpdate(id, name, type, label, additionalInfoJson);
    }

    // Absent, null, "" or blank: no label.
    private static @Nullable String label(JsonNode label) {
      if (label.isMissingNode() || label.isNull()) {
        return null;
      }
      if (!label.isTextual()) {
        throw new IllegalArgumentException("label must be a string");
      }
      return label.textValue().isBlank() ? null : RequestParams.name("label", label.textValue());
    }

    private static @Nullable String info(JsonNode info) {
      if (info.isMissingNode() || info.isNull()) {
        return null;
      }
      if (!info.isObject()) {
        throw new IllegalArgumentException("additionalInfo must be a JSON object");
      }
      // The administrator's link of a device to the gateway that may act for it (mqtt-api.md).
      if (!GatewayLink.isOwnerValue(info.path(GatewayLink.OWNER_GATEWAY))) {
        throw new IllegalArgumentException(
            "additionalInfo.ownerGateway must be the id of the gateway device that may act for"
                + " this device, or null");
      }
      return RequestParams.prefix("additionalInfo", info.toString(), Integer.MAX_VALUE);
    }
  }
}
