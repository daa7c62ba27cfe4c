package io.fieldline.transport.mqtt.publish;

import io.fieldline.common.device.Device;
import io.fieldline.common.log.LogThrottles;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageType;
import io.fieldline.transport.common.firmware.FirmwareConfig;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.firmware.FirmwareMetrics.Protocol;
import io.fieldline.transport.common.firmware.FirmwareMetrics.Refusal;
import io.fieldline.transport.common.pacing.RequestPacer;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.downlink.DownlinkTopics;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers firmware chunk requests ({@code v2/fw/request/{requestId}/chunk/{n}}, payload the chunk
 * size) with the bytes of chunk {@code n} of the firmware assigned to the device, on {@code
 * v2/fw/response/{requestId}/chunk/{n}}, as ThingsBoard does:
 *
 * <ul>
 *   <li>the size is the request's, else the one last given for the same request id, else {@code
 *       default-chunk-size}; chunk {@code n} is the bytes from {@code n × size};
 *   <li>a chunk at or past the end of the data is answered with an empty payload;
 *   <li>the firmware is looked up once per request id: a download keeps its package even if the
 *       assignment changes meanwhile (a new request id sees the new one);
 *   <li>the answer's QoS is the one granted to the session's firmware subscription ({@link
 *       DownlinkTopics#firmwareQos}, which honours ThingsBoard SDK's {@code v2/fw/response/+}), 1
 *       without one; it goes through the session's downlink, after what is queued.
 * </ul>
 *
 * <p>A request that cannot be answered with data is answered on {@code v2/fw/error} with a text
 * saying why, counted in {@code fieldline.ota.refused{protocol=mqtt,reason}} and logged
 * (rate-limited, per reason); the connection stays open (ThingsBoard closes it): a size above
 * {@code max-chunk-size}, a topic or payload not understood, no firmware with data assigned, a read
 * that failed, an answer above an MQTT 5 client's Maximum Packet Size. An answer the session's
 * downlink has no room for is dropped and counted ({@code queue_full}): the device asks again.
 *
 * <p>Paced like attribute requests: {@code request-burst} at once, then {@code request-rate} per
 * second, beyond which reading the socket pauses; at {@code max-reads} reads running, reading
 * pauses until one completes. The PUBLISH itself is acknowledged by the caller at once.
 *
 * <p>Confined to the channel's event loop; reads complete on it.
 */
final class FirmwareRequests {

  private static final Logger LOG = LoggerFactory.getLogger(FirmwareRequests.class);
  private static final LogThrottles<Refusal> REFUSALS = new LogThrottles<>(Refusal.class);

  private final Connection connection;
  private final Device device;
  private final SessionState session;
  private final Downlink downlink;
  private final FirmwareDelivery delivery;
  private final FirmwareConfig config;
  private final RequestPacer pacer;
  private int reading;
  // The last request id seen, its chunk size and its firmware once looked up.
  private @Nullable String lastRequestId;
  private int lastSize;
  private @Nullable OtaPackageInfo lastFirmware;

  /** The firmware downloads of {@code device}'s session, answered through {@code downlink}. */
  FirmwareRequests(
      SessionContext context,
      Connection connection,
      Device device,
      SessionState session,
      Downlink downlink) {
    this.connection = connection;
    this.device = device;
    this.session = session;
    this.downlink = downlink;
    this.delivery = context.firmware();
    this.config = delivery.config();
    this.pacer = new RequestPacer(config.requestRate(), config.requestBurst(), now());
  }

  /**
   * A chunk request.
   *
   * @param path the topic after {@code v2/fw/request/}: {@code {requestId}/chunk/{n}}
   */
  void onRequest(String path, byte[] payload) {
    assert connection.ctx().executor().inEventLoop();
    Duration pause = pacer.delayAfter(now());
    if (!pause.isZero()) {
      connection.pauseFor(Pause.FIRMWARE_RATE, pause);
    }
    ChunkRequest request;
    try {
      request = ChunkRequest.parse(path, payload);
    } catch (IllegalArgumentException e) {
      // parse always says what is wrong; the fallback only satisfies the type.
      refuse(
          Refusal.BAD_REQUEST, Objects.requireNonNullElse(e.getMessage(), "invalid chunk request"));
      return;
    }
    int size = sizeOf(request);
    if (size > config.maxChunkSize()) {
      refuse(
          Refusal.CHUNK_TOO_LARGE,
          "request "
              + request.requestId()
              + ": chunk size "
              + size
              + " is above the maximum of "
              + config.maxChunkSize()
              + " bytes");
      return;
    }
    startRead();
    firmwareFor(request.requestId())
        .thenCompose(firmware -> read(firmware, request, size))
        .whenCompleteAsync(
            (chunk, error) -> onRead(request, chunk, error),
            connection.ctx().channel().eventLoop());
  }

  // The request's size, or the last one given for its id, or the default.
  private int sizeOf(ChunkRequest request) {
    boolean same = request.requestId().equals(lastRequestId);
    if (!same) {
      lastRequestId = request.requestId();
      lastFirmware = null;
      lastSize = 0;
    }
    if (request.size().isPresent()) {
      lastSize = request.size().getAsInt();
    }
    return lastSize > 0 ? lastSize : config.defaultChunkSize();
  }

  private CompletionStage<Optional<OtaPackageInfo>> firmwareFor(String requestId) {
    OtaPackageInfo known = lastFirmware;
    if (known != null && requestId.equals(lastRequestId)) {
      return CompletableFuture.completedFuture(Optional.of(known));
    }
    try {
      return delivery
          .source()
          .assignedFirmware(device.id())
          .thenApply(found -> found.filter(FirmwareRequests::downloadable));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static boolean downloadable(OtaPackageInfo firmware) {
    return firmware.type() == OtaPackageType.FIRMWARE && firmware.hasData();
  }

  private CompletionStage<Chunk> read(
      Optional<OtaPackageInfo> found, ChunkRequest request, int size) {
    if (found.isEmpty()) {
      return CompletableFuture.completedFuture(Chunk.NO_FIRMWARE);
    }
    OtaPackageInfo firmware = found.get();
    long dataSize = firmware.data() == null ? 0 : firmware.data().size();
    long offset = (long) request.chunk() * size;
    if (offset >= dataSize) {
      return CompletableFuture.completedFuture(new Chunk(firmware, new byte[0]));
    }
    int length = (int) Math.min(size, dataSize - offset);
    return delivery
        .source()
        .readData(firmware.id(), offset, length)
        .thenApply(bytes -> new Chunk(firmware, bytes));
  }

  private void onRead(ChunkRequest request, @Nullable Chunk chunk, @Nullable Throwable error) {
    endRead();
    if (!connection.isConnected()) {
      return;
    }
    if (error != null || chunk == null) {
      refuse(
          Refusal.READ_FAILED,
          "request " + request.requestId() + ": the firmware could not be read, try again later",
          String.valueOf(error));
      return;
    }
    if (chunk.firmware() == null) {
      refuse(
          Refusal.NO_FIRMWARE,
          "request " + request.requestId() + ": no firmware with data is assigned to this device");
      return;
    }
    if (request.requestId().equals(lastRequestId)) {
      lastFirmware = chunk.firmware();
    }
    String topic =
        DownlinkTopics.FIRMWARE_RESPONSE_PREFIX + request.requestId() + "/chunk/" + request.chunk();
    int qos = DownlinkTopics.firmwareQos(session);
    if (!downlink.fits(topic, chunk.bytes().length, qos)) {
      // MQTT 5 §3.1.2.11.4: not sent as it is; the device learns why instead of waiting forever.
      refuse(
          Refusal.TOO_LARGE_FOR_CLIENT,
          "request "
              + request.requestId()
              + ": a chunk of "
              + chunk.bytes().length
              + " bytes exceeds the client's maximum packet size; ask for smaller chunks");
      return;
    }
    if (downlink.answer(topic, chunk.bytes(), qos)) {
      delivery.metrics().served(Protocol.MQTT, chunk.bytes().length);
    } else {
      delivery.metrics().refused(Protocol.MQTT, Refusal.QUEUE_FULL);
      REFUSALS
          .get(Refusal.QUEUE_FULL)
          .warn(
              LOG,
              "{} firmware chunk {} of request {} dropped: the session's downlink is full",
              connection.logPrefix(),
              request.chunk(),
              LogSafe.text(request.requestId()));
    }
  }

  private void refuse(Refusal refusal, String message) {
    refuse(refusal, message, "");
  }

  // Counted, logged (rate-limited per reason) and told on v2/fw/error when that fits.
  private void refuse(Refusal refusal, String message, String detail) {
    delivery.metrics().refused(Protocol.MQTT, refusal);
    REFUSALS
        .get(refusal)
        .warn(
            LOG,
            "{} firmware request refused ({}): {} {}",
            connection.logPrefix(),
            refusal,
            LogSafe.text(message),
            detail);
    byte[] payload = message.getBytes(StandardCharsets.UTF_8);
    int qos = DownlinkTopics.firmwareErrorQos(session);
    if (downlink.fits(DownlinkTopics.FIRMWARE_ERROR, payload.length, qos)) {
      downlink.answer(DownlinkTopics.FIRMWARE_ERROR, payload, qos);
    }
  }

  private void startRead() {
    reading++;
    if (reading >= config.maxReads()) {
      connection.pause(Pause.FIRMWARE_READS);
    }
  }

  private void endRead() {
    reading--;
    if (reading < config.maxReads()) {
      connection.resume(Pause.FIRMWARE_READS);
    }
  }

  // The clock the pauses are scheduled on (the system's, but a test's event loop may freeze it).
  private long now() {
    return connection.ctx().executor().ticker().nanoTime();
  }

  /**
   * What a read found: the firmware and the chunk's bytes, or no firmware ({@link #NO_FIRMWARE}).
   */
  private record Chunk(@Nullable OtaPackageInfo firmware, byte[] bytes) {
    static final Chunk NO_FIRMWARE = new Chunk(null, new byte[0]);
  }
}
