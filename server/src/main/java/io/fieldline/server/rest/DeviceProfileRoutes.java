package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileDraft;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.DeviceProfilePageQuery;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.profile.ProvisionType;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import io.fieldline.fleet.ota.FirmwareAssignments;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device profiles, ThingsBoard-shaped: {@code POST /api/deviceProfile} (create, or update when the
 * body carries the profile's {@code id}), {@code GET|DELETE /api/deviceProfile/{id}}, {@code POST
 * /api/deviceProfile/{id}/default} (make it the default profile), and {@code GET
 * /api/deviceProfiles?pageSize=&page=&textSearch=&sortProperty=&sortOrder=} (one page, with its
 * totals). The provision secret is write-only: a read shows null, the answer to a save echoes the
 * secret it was given, and a save without one keeps the current secret. A delete of a profile that
 * devices have, or of the default one, is refused with 409 (ThingsBoard: 400).
 *
 * <p>With OTA packages, a profile has a {@code firmwareId} (what its devices without their own
 * firmware get, {@link FirmwareAssignments}): a save with {@code
 * "firmwareId":{"entityType":"OTA_PACKAGE","id":..}} assigns it (checked before the profile is
 * saved), {@code null} removes it, no field leaves it; every read shows it. A deleted profile's
 * assignment goes with it.
 */
final class DeviceProfileRoutes extends AllDirectives {

  private static final Logger LOG = LoggerFactory.getLogger(DeviceProfileRoutes.class);

  /** ThingsBoard's transport types. */
  static final Set<String> TRANSPORT_TYPES = Set.of("DEFAULT", "MQTT", "COAP", "LWM2M", "SNMP");

  private final DeviceProfileStore profiles;
  private final @Nullable FirmwareAssignments firmware;

  /** Profiles without firmware: {@code firmwareId} always null, one in a body refused. */
  DeviceProfileRoutes(DeviceProfileStore profiles) {
    this(profiles, null);
  }

  DeviceProfileRoutes(DeviceProfileStore profiles, @Nullable FirmwareAssignments firmware) {
    this.profiles = profiles;
    this.firmware = firmware;
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return concat(
        path(
            PathMatchers.segment("deviceProfile"),
            () ->
                post(
                    () ->
                        entity(
                            Unmarshaller.entityToString(),
                            body -> OtaPackageRoutes.reply(() -> save(body))))),
        pathPrefix(
            PathMatchers.segment("deviceProfile").slash(PathMatchers.uuidSegment()),
            uuid -> {
              DeviceProfileId id = new DeviceProfileId(uuid);
              return concat(
                  pathEnd(
                      () ->
                          concat(
                              get(() -> HttpJson.reply(() -> find(id))),
                              delete(() -> HttpJson.reply(() -> delete(id))))),
                  path("default", () -> post(() -> HttpJson.reply(() -> makeDefault(id)))));
            }),
        path(
            PathMatchers.segment("deviceProfiles"),
            () -> get(() -> parameterMap(params -> HttpJson.reply(() -> list(params))))));
  }

  private CompletionStage<HttpResponse> find(DeviceProfileId id) {
    return profiles.findById(id).thenCompose(found -> profileOr404(found, null));
  }

  /** The profile's JSON with its {@code firmwareId} (null when none), or 404. */
  private CompletionStage<HttpResponse> profileOr404(
      Optional<DeviceProfile> found, @Nullable String secretShown) {
    if (found.isEmpty()) {
      return CompletableFuture.completedFuture(HttpJson.notFound("device profile"));
    }
    DeviceProfile profile = found.get();
    FirmwareAssignments assignments = firmware;
    if (assignments == null) {
      return CompletableFuture.completedFuture(
          HttpJson.ok(JsonViews.deviceProfile(profile, secretShown)));
    }
    return assignments
        .ofProfile(profile.id())
        .thenApply(
            assigned ->
                HttpJson.ok(withFirmware(JsonViews.deviceProfile(profile, secretShown), assigned)));
  }

  private static ObjectNode withFirmware(ObjectNode view, Optional<OtaPackageId> firmware) {
    view.set(
        "firmwareId",
        firmware.<JsonNode>map(OtaJson::packageId).orElse(JsonViews.MAPPER.nullNode()));
    return view;
  }

  // A deleted profile's firmware assignment goes with it; should that fail, a delete of the
  // package finds the profile gone and forgets it then.
  private CompletionStage<HttpResponse> delete(DeviceProfileId id) {
    return profiles
        .delete(id)
        .thenCompose(
            deletion -> {
              FirmwareAssignments assignments = firmware;
              if (deletion != DeviceProfileStore.Deletion.DELETED || assignments == null) {
                return CompletableFuture.completedFuture(deletion);
              }
              return assignments
                  .forgetProfile(id)
                  .handle(
                      (forgotten, error) -> {
                        if (error != null) {
                          LOG.warn(
                              "[profile|{}] deleted, but its firmware assignment was not removed"
                                  + " (a delete of the package will)",
                              id,
                              error);
                        }
                        return deletion;
                      });
            })
        .thenApply(
            deletion ->
                switch (deletion) {
                  case DELETED -> HttpJson.ok(JsonViews.MAPPER.createObjectNode());
                  case NOT_FOUND -> HttpJson.notFound("device profile");
                  case IN_USE ->
                      HttpJson.error(
                          409, "the device profile is referenced by devices and cannot be deleted");
                  case DEFAULT ->
                      HttpJson.error(409, "the default device profile cannot be deleted");
                });
  }

  private CompletionStage<HttpResponse> makeDefault(DeviceProfileId id) {
    return profiles
        .findById(id)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return CompletableFuture.completedFuture(HttpJson.notFound("device profile"));
              }
              DeviceProfile p = found.get();
              DeviceProfileDraft draft =
                  new DeviceProfileDraft(
                      p.name(),
                      p.type(),
                      p.transportType(),
                      p.provisionType(),
                      p.provisionDeviceKey(),
                      null,
                      p.description(),
                      true);
              return profiles.update(id, draft).thenCompose(updated -> profileOr404(updated, null));
            });
  }

  /**
   * ThingsBoard's save: an update when the body has the profile's {@code id}, else a create. A
   * {@code firmwareId} is checked first (nothing is saved when it is refused), and assigned once
   * the profile is saved.
   */
  private CompletionStage<HttpResponse> save(String body) {
    JsonNode json = HttpJson.parseObject(body);
    DeviceProfileDraft draft = draft(json);
    String secretShown = draft.provisionDeviceSecret();
    Optional<Optional<OtaPackageId>> requested = firmwareId(json);
    JsonNode id = json.path("id");
    DeviceProfileId existing = !id.isMissingNode() && !id.isNull() ? profileId(id) : null;
    return checkFirmware(requested, existing)
        .thenCompose(
            checked ->
                existing != null
                    ? profiles.update(existing, draft)
                    : profiles.create(draft).thenApply(Optional::of))
        .thenCompose(saved -> assignFirmware(saved, requested))
        .thenCompose(saved -> profileOr404(saved, secretShown));
  }

  /**
   * The body's {@code firmwareId}: empty when absent; an empty optional for null. Without firmware
   * on this server a package is refused and null ignored (ThingsBoard's UI sends {@code
   * "firmwareId":null} with every save).
   */
  private Optional<Optional<OtaPackageId>> firmwareId(JsonNode json) {
    Optional<Optional<OtaPackageId>> requested = OtaJson.firmwareId(json);
    if (firmware == null && requested.isPresent()) {
      if (requested.get().isPresent()) {
        throw new IllegalArgumentException("firmware assignment is not available on this server");
      }
      return Optional.empty();
    }
    return requested;
  }

  private CompletionStage<Void> checkFirmware(
      Optional<Optional<OtaPackageId>> requested, @Nullable DeviceProfileId profile) {
    FirmwareAssignments assignments = firmware;
    if (assignments == null || requested.isEmpty() || requested.get().isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return assignments.assignableTo(requested.get().get(), profile).thenApply(ok -> null);
  }

  private CompletionStage<Optional<DeviceProfile>> assignFirmware(
      Optional<DeviceProfile> saved, Optional<Optional<OtaPackageId>> requested) {
    FirmwareAssignments assignments = firmware;
    if (saved.isEmpty() || requested.isEmpty() || assignments == null) {
      return CompletableFuture.completedFuture(saved);
    }
    return assignments
        .setForProfile(saved.get().id(), requested.get())
        .thenApply(assigned -> saved);
  }

  /** ThingsBoard's entity id, {@code {"entityType":"DEVICE_PROFILE","id":"<uuid>"}}. */
  static DeviceProfileId profileId(JsonNode id) {
    String type = id.path("entityType").asText("DEVICE_PROFILE");
    JsonNode uuid = id.path("id");
    if (!id.isObject() || !type.equals("DEVICE_PROFILE") || !uuid.isTextual()) {
      throw new IllegalArgumentException(
          "id must be {\"entityType\":\"DEVICE_PROFILE\",\"id\":\"<uuid>\"}");
    }
    try {
      return new DeviceProfileId(UUID.fromString(uuid.textValue()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("id.id must be a UUID");
    }
  }

  /**
   * The profile a body describes. {@code provisionType} is read at the top (ThingsBoard's field)
   * or, when absent there, from {@code profileData.provisionConfiguration.type}; the secret from
   * {@code profileData.provisionConfiguration.provisionDeviceSecret}.
   */
  private static DeviceProfileDraft draft(JsonNode json) {
    String name = RequestParams.name("name", text(json, "name", "").trim());
    String type = text(json, "type", "DEFAULT");
    if (!type.equals("DEFAULT")) {
      throw new IllegalArgumentException("type must be DEFAULT");
    }
    String transportType = text(json, "transportType", "DEFAULT");
    if (!TRANSPORT_TYPES.contains(transportType)) {
      throw new IllegalArgumentException(
          "transportType must be one of "
              + String.join(", ", TRANSPORT_TYPES.stream().sorted().toList()));
    }
    JsonNode provision = json.path("profileData").path("provisionConfiguration");
    String provisionType =
        text(json, "provisionType", text(provision, "type", ProvisionType.DISABLED.name()));
    ProvisionType parsedType;
    try {
      parsedType = ProvisionType.valueOf(provisionType);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "provisionType must be DISABLED, ALLOW_CREATE_NEW_DEVICES or"
              + " CHECK_PRE_PROVISIONED_DEVICES");
    }
    String key = optionalText(json, "provisionDeviceKey");
    String secret = optionalText(provision, "provisionDeviceSecret");
    String description = optionalText(json, "description");
    JsonNode isDefault = json.path("default");
    if (!isDefault.isMissingNode() && !isDefault.isNull() && !isDefault.isBoolean()) {
      throw new IllegalArgumentException("default must be true or false");
    }
    return new DeviceProfileDraft(
        name,
        type,
        transportType,
        parsedType,
        key == null || key.isEmpty() ? null : key,
        secret == null || secret.isEmpty() ? null : secret,
        description == null || description.isBlank() ? null : description,
        isDefault.asBoolean(false));
  }

  private static String text(JsonNode json, String field, String fallback) {
    String value = optionalText(json, field);
    return value == null ? fallback : value;
  }

  private static @Nullable String optionalText(JsonNode json, String field) {
    JsonNode value = json.path(field);
    if (value.isMissingNode() || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw new IllegalArgumentException(field + " must be a string");
    }
    return value.textValue();
  }

  /**
   * {@code pageSize} (required, 1..1000), {@code page} (from 0), {@code textSearch}, {@code
   * sortProperty} ({@code name}, default; {@code createdTime}, {@code transportType}, {@code
   * provisionType}) and {@code sortOrder} ({@code ASC}, default, or {@code DESC}).
   */
  private CompletionStage<HttpResponse> list(Map<String, String> params) {
    int pageSize =
        (int) RequestParams.longIn(params, "pageSize", null, 1, RequestParams.MAX_PAGE_SIZE);
    int page = (int) RequestParams.longIn(params, "page", 0L, 0, Integer.MAX_VALUE);
    if ((long) page * pageSize > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("page * pageSize must be at most " + Integer.MAX_VALUE);
    }
    Optional<String> textSearch =
        Optional.ofNullable(params.get("textSearch"))
            .filter(text -> !text.isBlank())
            .map(text -> RequestParams.name("textSearch", text));
    DeviceProfilePageQuery query =
        new DeviceProfilePageQuery(
            pageSize,
            page,
            textSearch,
            sortProperty(params.get("sortProperty")),
            RequestParams.oneOf(params, "sortOrder", SortOrder.class, SortOrder.ASC));
    return profiles.page(query).thenCompose(this::pageWithFirmware);
  }

  /** Profiles' firmware read at once at most when a page is listed. */
  static final int FIRMWARE_READS = 100;

  // The firmware of the page's profiles, read FIRMWARE_READS at a time.
  private CompletionStage<HttpResponse> pageWithFirmware(PageData<DeviceProfile> found) {
    FirmwareAssignments assignments = firmware;
    if (assignments == null) {
      return CompletableFuture.completedFuture(
          HttpJson.ok(JsonViews.page(found, p -> JsonViews.deviceProfile(p, null))));
    }
    Map<DeviceProfileId, Optional<OtaPackageId>> read = new HashMap<>();
    return readFirmware(assignments, found.data(), 0, read)
        .thenApply(
            done ->
                HttpJson.ok(
                    JsonViews.page(
                        found,
                        p ->
                            withFirmware(
                                JsonViews.deviceProfile(p, null),
                                read.getOrDefault(p.id(), Optional.empty())))));
  }

  private static CompletionStage<Void> readFirmware(
      FirmwareAssignments assignments,
      List<DeviceProfile> profiles,
      int from,
      Map<DeviceProfileId, Optional<OtaPackageId>> into) {
    if (from >= profiles.size()) {
      return CompletableFuture.completedFuture(null);
    }
    List<DeviceProfile> chunk =
        profiles.subList(from, Math.min(profiles.size(), from + FIRMWARE_READS));
    Map<DeviceProfileId, CompletableFuture<Optional<OtaPackageId>>> reads = new HashMap<>();
    for (DeviceProfile profile : chunk) {
      reads.put(profile.id(), assignments.ofProfile(profile.id()).toCompletableFuture());
    }
    return CompletableFuture.allOf(reads.values().toArray(new CompletableFuture<?>[0]))
        .thenCompose(
            done -> {
              synchronized (into) {
                reads.forEach((id, found) -> into.put(id, found.join()));
              }
              return readFirmware(assignments, profiles, from + FIRMWARE_READS, into);
            });
  }

  private static DeviceProfilePageQuery.SortProperty sortProperty(@Nullable String value) {
    if (value == null || value.isBlank()) {
      return DeviceProfilePageQuery.SortProperty.NAME;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "name" -> DeviceProfilePageQuery.SortProperty.NAME;
      case "createdtime" -> DeviceProfilePageQuery.SortProperty.CREATED_TIME;
      case "transporttype" -> DeviceProfilePageQuery.SortProperty.TRANSPORT_TYPE;
      case "provisiontype" -> DeviceProfilePageQuery.SortProperty.PROVISION_TYPE;
      default ->
          throw new IllegalArgumentException(
              "sortProperty must be one of name, createdTime, transportType, provisionType");
    };
  }
}
