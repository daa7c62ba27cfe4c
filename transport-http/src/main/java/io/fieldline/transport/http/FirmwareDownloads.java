package io.fieldline.transport.http;

import io.fieldline.common.StoreException;
import io.fieldline.common.device.Device;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.ota.FirmwareSource;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageType;
import io.fieldline.transport.common.firmware.FirmwareConfig;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.firmware.FirmwareMetrics;
import io.fieldline.transport.common.firmware.FirmwareMetrics.Protocol;
import io.fieldline.transport.http.DeviceApiMetrics.Refusal;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.ContentDisposition;
import org.apache.pekko.http.javadsl.model.headers.ContentDispositionTypes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ThingsBoard's firmware download of the HTTP device API, {@code GET
 * /api/v1/{token}/firmware?title=&version=&size=&chunk=}: the firmware assigned to the token's
 * device, if its {@code title} and {@code version} are the ones asked for — the bytes from {@code
 * chunk × size} (at most {@code size}; none past the end), or with {@code size} absent or 0 the
 * whole file, streamed one stored chunk at a time. With the file's content type, {@code
 * Content-Disposition: attachment; filename=..} and ThingsBoard's {@code x-filename}.
 *
 * <p>The same bounds as the MQTT download ({@code fieldline.mqtt.firmware}): a {@code size} above
 * {@code max-chunk-size} is refused. Refusals: missing or malformed parameters, a size above the
 * maximum or a title or version that is not the assigned firmware's 400 (ThingsBoard's answer to
 * the latter), no firmware with data assigned 404, storage trouble 503; each counted in {@code
 * fieldline.ota.refused{protocol=http,reason}} and {@code fieldline.http.device.rejected}, and
 * logged rate-limited. Thread-safe.
 */
final class FirmwareDownloads {

  private static final Logger LOG = LoggerFactory.getLogger(FirmwareDownloads.class);
  // Read-failure lines: at most one per 10 s.
  private static final LogThrottle FAILURE_LOG = new LogThrottle();

  private final FirmwareSource source;
  private final FirmwareConfig bounds;
  private final FirmwareMetrics firmwareMetrics;
  private final DeviceApiMetrics metrics;

  FirmwareDownloads(FirmwareDelivery delivery, DeviceApiMetrics metrics) {
    this.source = delivery.source();
    this.bounds = delivery.config();
    this.firmwareMetrics = delivery.metrics();
    this.metrics = metrics;
  }

  /**
   * The answer to {@code device}'s download with the request's query {@code params}; never fails (a
   * failure is answered 400 or 503 here).
   */
  CompletionStage<HttpResponse> download(Device device, Map<String, String> params) {
    CompletionStage<HttpResponse> answer;
    try {
      answer = checked(device, params);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return answer.exceptionally(this::failure);
  }

  private CompletionStage<HttpResponse> checked(Device device, Map<String, String> params) {
    String title = required(params, "title");
    String version = required(params, "version");
    int size = (int) number(params, "size", FirmwareConfig.CHUNK_SIZE_LIMIT * 16L);
    int chunk = (int) number(params, "chunk", Integer.MAX_VALUE);
    if (size > bounds.maxChunkSize()) {
      return refused(
          FirmwareMetrics.Refusal.CHUNK_TOO_LARGE,
          400,
          device.id().toString(),
          "size must be at most " + bounds.maxChunkSize() + " (0 for the whole file)");
    }
    return source
        .assignedFirmware(device.id())
        .thenCompose(firmware -> answer(device, firmware, title, version, size, chunk));
  }

  private CompletionStage<HttpResponse> answer(
      Device device,
      Optional<OtaPackageInfo> found,
      String title,
      String version,
      int size,
      int chunk) {
    OtaPackageInfo firmware =
        found.filter(f -> f.type() == OtaPackageType.FIRMWARE && f.hasData()).orElse(null);
    OtaPackageData data = firmware == null ? null : firmware.data();
    if (firmware == null || data == null) {
      return refused(
          FirmwareMetrics.Refusal.NO_FIRMWARE,
          404,
          device.id().toString(),
          "no firmware with data is assigned to this device");
    }
    if (!firmware.title().equals(title) || !firmware.version().equals(version)) {
      return refused(
          FirmwareMetrics.Refusal.WRONG_VERSION,
          400,
          device.id().toString(),
          "wrong firmware title or version: the device is assigned another one");
    }
    if (size == 0) {
      firmwareMetrics.served(Protocol.HTTP, data.size());
      return CompletableFuture.completedFuture(
          file(data, HttpEntities.create(contentType(data), data.size(), whole(firmware, data))));
    }
    long offset = (long) chunk * size;
    if (offset >= data.size()) {
      firmwareMetrics.served(Protocol.HTTP, 0);
      return CompletableFuture.completedFuture(
          file(data, HttpEntities.create(contentType(data), new byte[0])));
    }
    int length = (int) Math.min(size, data.size() - offset);
    return source
        .readData(firmware.id(), offset, length)
        .thenApply(
            bytes -> {
              firmwareMetrics.served(Protocol.HTTP, bytes.length);
              return file(data, HttpEntities.create(contentType(data), bytes));
            });
  }

  // The whole data, one stored chunk at a time as the client takes it.
  private Source<ByteString, ?> whole(OtaPackageInfo firmware, OtaPackageData data) {
    int step = source.dataChunkSize();
    return Source.unfoldAsync(
        0L,
        offset ->
            offset >= data.size()
                ? CompletableFuture.completedFuture(Optional.empty())
                : source
                    .readData(firmware.id(), offset, step)
                    .thenApply(
                        bytes -> {
                          if (bytes.length == 0) {
                            throw new IllegalStateException("firmware data ended early");
                          }
                          return Optional.of(
                              Pair.create(offset + bytes.length, ByteString.fromArray(bytes)));
                        }));
  }

  private static HttpResponse file(
      OtaPackageData data, org.apache.pekko.http.javadsl.model.ResponseEntity entity) {
    return HttpResponse.create()
        .withStatus(200)
        .addHeader(
            ContentDisposition.create(
                ContentDispositionTypes.ATTACHMENT, Map.of("filename", data.fileName())))
        .addHeader(RawHeader.create("x-filename", data.fileName()))
        .withEntity(entity);
  }

  private static ContentType contentType(OtaPackageData data) {
    try {
      return ContentTypes.parse(data.contentType());
    } catch (RuntimeException e) {
      return ContentTypes.APPLICATION_OCTET_STREAM;
    }
  }

  private CompletionStage<HttpResponse> refused(
      FirmwareMetrics.Refusal refusal, int status, String who, String message) {
    firmwareMetrics.refused(Protocol.HTTP, refusal);
    metrics.refused(status == 400 ? Refusal.BAD_REQUEST : Refusal.OTHER, who, message);
    return CompletableFuture.completedFuture(HttpErrors.error(status, message));
  }

  private HttpResponse failure(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof IllegalArgumentException) {
      firmwareMetrics.refused(Protocol.HTTP, FirmwareMetrics.Refusal.BAD_REQUEST);
      String message = HttpErrors.clientMessage(cause, "malformed request");
      metrics.refused(Refusal.BAD_REQUEST, "-", message);
      return HttpErrors.error(400, message);
    }
    firmwareMetrics.refused(Protocol.HTTP, FirmwareMetrics.Refusal.READ_FAILED);
    if (FAILURE_LOG.admit() >= 0) {
      LOG.warn("[http-device] firmware download answered 503: {}", String.valueOf(cause));
    }
    return HttpErrors.error(
            503,
            cause instanceof StoreException
                ? "storage unavailable, try again later"
                : "firmware could not be read, try again later")
        .addHeader(RawHeader.create("Retry-After", "1"));
  }

  private static String required(Map<String, String> params, String name) {
    String value = params.get(name);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " is required");
    }
    return value;
  }

  // A non-negative integer parameter, 0 when absent.
  private static long number(Map<String, String> params, String name, long max) {
    @Nullable String value = params.get(name);
    if (value == null || value.isBlank()) {
      return 0;
    }
    try {
      long parsed = Long.parseLong(value.strip());
      if (parsed >= 0 && parsed <= max) {
        return parsed;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new IllegalArgumentException(name + " must be an integer in 0.." + max);
  }
}
