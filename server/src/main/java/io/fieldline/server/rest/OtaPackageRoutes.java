package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.ota.ChecksumAlgorithm;
import io.fieldline.common.ota.OtaPackageConflictException;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.common.ota.OtaPackageType;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import io.fieldline.fleet.ota.OtaPackages;
import io.fieldline.server.rest.PackageUpload.PackageTooLargeException;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.ContentDisposition;
import org.apache.pekko.http.javadsl.model.headers.ContentDispositionTypes;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.server.directives.FileInfo;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * ThingsBoard's OTA package API under {@code /api}:
 *
 * <ul>
 *   <li>{@code POST /otaPackage} creates a package without data ({@link OtaJson#draft});
 *   <li>{@code POST /otaPackage/{id}?checksumAlgorithm=&checksum=} uploads its file as the
 *       multipart part {@code file}, streamed into storage ({@code PackageUpload}); the checksum is
 *       computed, and verified when given; a package's data is set once;
 *   <li>{@code GET /otaPackage/info/{id}} and {@code GET /otaPackage/{id}}: its info (the latter
 *       without ThingsBoard's inline {@code data}: use the download);
 *   <li>{@code GET /otaPackage/{id}/download}: the file, streamed from storage, with {@code
 *       Content-Disposition: attachment};
 *   <li>{@code GET /otaPackages?pageSize=&page=&textSearch=&sortProperty=&sortOrder=} and {@code
 *       GET /otaPackages/{deviceProfileId}/{type}?...} (only those with data): pages of infos;
 *   <li>{@code DELETE /otaPackage/{id}}: refused (409) while devices are assigned it, as
 *       ThingsBoard refuses it;
 *   <li>Fieldline's {@code GET|POST /fieldline/device/{id}/firmware} ({@code {"firmwareId":..}}): a
 *       device's firmware, read and assigned without the rest of the device.
 * </ul>
 *
 * Errors: bad input 400, no such package or device 404, a taken title and version, data already
 * uploaded or a package in use 409 (ThingsBoard answers 400), a file above {@code
 * fieldline.ota.max-package-size} 413, storage trouble 503. Immutable; requests run on Pekko's
 * dispatcher and continue on the storage's threads.
 */
final class OtaPackageRoutes extends AllDirectives {

  /** Room for the multipart framing around the file within the body size limit. */
  private static final long MULTIPART_OVERHEAD = 64 * 1024;

  private final OtaPackages ota;
  private final OtaPackageStore store;
  private final DeviceRegistry registry;
  private final PackageUpload uploads;

  OtaPackageRoutes(OtaPackages ota, DeviceRegistry registry) {
    this.ota = ota;
    this.store = ota.store();
    this.registry = registry;
    this.uploads = new PackageUpload(ota.store(), ota.config(), ota.metrics());
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return concat(
        path("otaPackage", () -> post(() -> json(this::create))),
        path(
            PathMatchers.segment("otaPackage").slash("info").slash(PathMatchers.uuidSegment()),
            uuid -> get(() -> reply(() -> info(new OtaPackageId(uuid))))),
        path(
            PathMatchers.segment("otaPackage").slash(PathMatchers.uuidSegment()).slash("download"),
            uuid -> get(() -> reply(() -> download(new OtaPackageId(uuid))))),
        path(
            PathMatchers.segment("otaPackage").slash(PathMatchers.uuidSegment()),
            uuid -> {
              OtaPackageId id = new OtaPackageId(uuid);
              return concat(
                  get(() -> reply(() -> info(id))),
                  delete(() -> reply(() -> delete(id))),
                  post(() -> upload(id)));
            }),
        path(
            "otaPackages",
            () -> get(() -> parameterMap(params -> reply(() -> page(params, Optional.empty()))))),
        path(
            PathMatchers.segment("otaPackages")
                .slash(PathMatchers.uuidSegment())
                .slash(PathMatchers.segment()),
            (profile, type) ->
                get(
                    () ->
                        parameterMap(
                            params ->
                                reply(
                                    () -> page(params, Optional.of(forProfile(profile, type))))))),
        path(
            PathMatchers.segment("fieldline")
                .slash("device")
                .slash(PathMatchers.uuidSegment())
                .slash("firmware"),
            uuid -> {
              DeviceId device = new DeviceId(uuid);
              return concat(
                  get(() -> reply(() -> firmwareOf(device))),
                  post(() -> json(body -> assign(device, body))));
            }));
  }

  private CompletionStage<HttpResponse> create(JsonNode body) {
    return store.create(OtaJson.draft(body)).thenApply(info -> HttpJson.ok(OtaJson.info(info)));
  }

  private CompletionStage<HttpResponse> info(OtaPackageId id) {
    return store
        .find(id)
        .thenApply(
            found ->
                found
                    .map(info -> HttpJson.ok(OtaJson.info(info)))
                    .orElseGet(() -> HttpJson.notFound("OTA package")));
  }

  private CompletionStage<HttpResponse> delete(OtaPackageId id) {
    return ota.assignments()
        .deletePackage(id)
        .thenApply(
            deleted ->
                deleted
                    ? HttpJson.ok(JsonViews.MAPPER.createObjectNode())
                    : HttpJson.notFound("OTA package"));
  }

  /**
   * The multipart part {@code file}, streamed within {@code max-package-size} and {@code
   * upload-timeout}; the body size limit and the request timeout of the rest of the API do not
   * apply to this route.
   */
  private Route upload(OtaPackageId id) {
    return parameterMap(
        params ->
            withRequestTimeout(
                ota.config().uploadTimeout(),
                () ->
                    withSizeLimit(
                        ota.config().maxPackageBytes() + MULTIPART_OVERHEAD,
                        () ->
                            extractMaterializer(
                                materializer ->
                                    fileUpload(
                                        "file",
                                        (file, bytes) ->
                                            reply(
                                                () ->
                                                    upload(
                                                        id,
                                                        params,
                                                        file,
                                                        bytes,
                                                        materializer)))))));
  }

  private CompletionStage<HttpResponse> upload(
      OtaPackageId id,
      Map<String, String> params,
      FileInfo file,
      Source<ByteString, Object> bytes,
      Materializer materializer) {
    String algorithmName = params.get("checksumAlgorithm");
    if (algorithmName == null || algorithmName.isBlank()) {
      throw new IllegalArgumentException("checksumAlgorithm is required");
    }
    ChecksumAlgorithm algorithm = ChecksumAlgorithm.parse(algorithmName);
    String checksum = params.get("checksum");
    String fileName = file.getFileName().isBlank() ? "firmware.bin" : file.getFileName();
    String contentType = file.getContentType().toString();
    return uploads
        .upload(
            id,
            algorithm,
            checksum == null || checksum.isBlank() ? null : checksum,
            fileName,
            contentType,
            bytes,
            materializer)
        .thenApply(info -> HttpJson.ok(OtaJson.info(info)));
  }

  private CompletionStage<HttpResponse> download(OtaPackageId id) {
    return store
        .find(id)
        .thenApply(
            found -> {
              OtaPackageData data = found.map(OtaPackageInfo::data).orElse(null);
              if (data == null) {
                return HttpJson.notFound(found.isEmpty() ? "OTA package" : "OTA package data");
              }
              return HttpResponse.create()
                  .withStatus(200)
                  .addHeader(
                      ContentDisposition.create(
                          ContentDispositionTypes.ATTACHMENT, Map.of("filename", data.fileName())))
                  .withEntity(
                      HttpEntities.create(contentType(data), data.size(), dataOf(id, data.size())));
            });
  }

  /**
   * The data read from storage one stored chunk at a time, as the client takes it: the file is
   * never held whole. Not through the download cache: a whole file would only push out the chunks
   * devices are reading.
   */
  private Source<ByteString, ?> dataOf(OtaPackageId id, long size) {
    int chunk = store.dataChunkSize();
    return Source.unfoldAsync(
        0L,
        offset ->
            offset >= size
                ? CompletableFuture.completedFuture(Optional.empty())
                : store
                    .readData(id, offset, chunk)
                    .thenApply(
                        bytes -> {
                          if (bytes.length == 0) {
                            throw new NoSuchElementException("OTA package data gone");
                          }
                          return Optional.of(
                              org.apache.pekko.japi.Pair.create(
                                  offset + bytes.length, ByteString.fromArray(bytes)));
                        }));
  }

  private static ContentType contentType(OtaPackageData data) {
    try {
      return ContentTypes.parse(data.contentType());
    } catch (RuntimeException e) {
      return ContentTypes.APPLICATION_OCTET_STREAM;
    }
  }

  private CompletionStage<HttpResponse> page(
      Map<String, String> params, Optional<Predicate<OtaPackageInfo>> filter) {
    int pageSize =
        (int) RequestParams.longIn(params, "pageSize", null, 1, RequestParams.MAX_PAGE_SIZE);
    int page = (int) RequestParams.longIn(params, "page", 0L, 0, Integer.MAX_VALUE);
    if ((long) page * pageSize > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("page * pageSize must be at most " + Integer.MAX_VALUE);
    }
    String text = params.get("textSearch");
    String search = text == null || text.isBlank() ? null : text.strip().toLowerCase(Locale.ROOT);
    Comparator<OtaPackageInfo> order = order(params);
    return store
        .all()
        .thenApply(
            all -> {
              List<OtaPackageInfo> matching =
                  all.stream()
                      .filter(filter.orElse(info -> true))
                      .filter(
                          info ->
                              search == null
                                  || info.title().toLowerCase(Locale.ROOT).contains(search))
                      .sorted(order)
                      .toList();
              long from = (long) page * pageSize;
              List<OtaPackageInfo> slice =
                  from >= matching.size()
                      ? List.of()
                      : matching.subList(
                          (int) from, (int) Math.min(matching.size(), from + pageSize));
              return HttpJson.ok(OtaJson.page(PageData.of(slice, matching.size(), pageSize, page)));
            });
  }

  // ThingsBoard's sortProperty (createdTime, title, version, type) and sortOrder; newest first
  // unless asked otherwise, as ThingsBoard's UI lists packages. Ties broken by id: pages are
  // stable.
  private static Comparator<OtaPackageInfo> order(Map<String, String> params) {
    String property = params.getOrDefault("sortProperty", "createdTime").strip();
    Comparator<OtaPackageInfo> by =
        switch (property.toLowerCase(Locale.ROOT)) {
          case "", "createdtime" -> Comparator.comparingLong(OtaPackageInfo::createdTime);
          case "title" -> Comparator.comparing(OtaPackageInfo::title);
          case "version" -> Comparator.comparing(OtaPackageInfo::version);
          case "type" -> Comparator.comparing(OtaPackageInfo::type);
          default ->
              throw new IllegalArgumentException(
                  "sortProperty must be one of createdTime, title, version, type");
        };
    SortOrder direction = RequestParams.oneOf(params, "sortOrder", SortOrder.class, SortOrder.DESC);
    Comparator<OtaPackageInfo> ordered = direction == SortOrder.DESC ? by.reversed() : by;
    return ordered.thenComparing(info -> info.id().value());
  }

  private static Predicate<OtaPackageInfo> forProfile(UUID profile, String typeName) {
    OtaPackageType type;
    try {
      type = OtaPackageType.valueOf(typeName.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("type must be FIRMWARE or SOFTWARE");
    }
    return info -> profile.equals(info.deviceProfileId()) && info.type() == type && info.hasData();
  }

  private CompletionStage<HttpResponse> firmwareOf(DeviceId device) {
    return HttpJson.withDevice(
        registry,
        device,
        found -> ota.assignments().of(device).thenApply(assigned -> firmwareJson(assigned)));
  }

  private CompletionStage<HttpResponse> assign(DeviceId device, JsonNode body) {
    Optional<OtaPackageId> firmware =
        OtaJson.firmwareId(body)
            .orElseThrow(() -> new IllegalArgumentException("firmwareId is required (or null)"));
    return HttpJson.withDevice(
        registry,
        device,
        found ->
            ota.assignments()
                .set(device, firmware)
                .thenApply(assigned -> firmwareJson(assigned.map(OtaPackageInfo::id))));
  }

  private static HttpResponse firmwareJson(Optional<OtaPackageId> firmware) {
    ObjectNode node = JsonViews.MAPPER.createObjectNode();
    node.set(
        "firmwareId",
        firmware.<JsonNode>map(OtaJson::packageId).orElse(JsonViews.MAPPER.nullNode()));
    return HttpJson.ok(node);
  }

  private Route json(java.util.function.Function<JsonNode, CompletionStage<HttpResponse>> then) {
    return entity(
        Unmarshaller.entityToString(), body -> reply(() -> then.apply(HttpJson.parseObject(body))));
  }

  /** Like {@link HttpJson#reply}, with the OTA failures mapped first ({@link #failure}). */
  static Route reply(Supplier<CompletionStage<HttpResponse>> response) {
    return HttpJson.reply(response, OtaPackageRoutes::failure);
  }

  /** No such package 404, conflicts 409, a file too large 413; the rest as every route maps it. */
  static HttpResponse failure(Throwable error) {
    Throwable cause = HttpJson.unwrap(error);
    if (cause instanceof NoSuchElementException) {
      return HttpJson.error(404, String.valueOf(cause.getMessage()));
    }
    if (cause instanceof OtaPackageConflictException) {
      return HttpJson.error(409, String.valueOf(cause.getMessage()));
    }
    if (cause instanceof PackageTooLargeException) {
      return HttpJson.error(413, String.valueOf(cause.getMessage()));
    }
    if (cause instanceof EntityStreamSizeException) {
      return HttpJson.error(413, "the request is larger than fieldline.ota.max-package-size");
    }
    return HttpJson.failure(cause);
  }
}
