package io.fieldline.transport.http;

import io.fieldline.common.DeviceId;
import io.fieldline.common.deadletter.DeadLetter;
import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.http.DeviceApiMetrics.Refusal;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.jspecify.annotations.Nullable;

/**
 * Telemetry and client-attribute uploads ({@code POST .../telemetry}, {@code POST .../attributes})
 * with the MQTT path's promise: parsed by the same {@link PayloadParser}, submitted through the
 * same {@link DeviceInbox} (the device's actor, on its owner node in a cluster), and answered 200
 * only once every row is stored — the HTTP form of the PUBACK. Otherwise:
 *
 * <ul>
 *   <li>a payload the parser refuses: 400 with the parser's reason; with {@code
 *       fieldline.mqtt.invalid-payload = dead-letter} (the default) the body is also kept as a dead
 *       letter (readable over REST, its topic {@code /api/v1/{token}/telemetry}, the token left
 *       out), before the answer;
 *   <li>as many uploads of the device being stored as {@code fieldline.mqtt.max-inflight}: 429;
 *   <li>the write failed, timed out or was refused for overload, or the node cannot take the device
 *       now: 503 with {@code Retry-After}, nothing acknowledged (the MQTT path sends no PUBACK);
 *   <li>the device was deleted meanwhile: 401.
 * </ul>
 *
 * Thread-safe.
 */
final class Uploads {

  /** What is uploaded. */
  enum Kind {
    TELEMETRY("/api/v1/{token}/telemetry"),
    ATTRIBUTES("/api/v1/{token}/attributes");

    private final String deadLetterTopic;

    Kind(String deadLetterTopic) {
      this.deadLetterTopic = deadLetterTopic;
    }
  }

  private final DeviceInbox gateway;
  private final PayloadParser parser;
  private final DeadLetterStore deadLetters;
  private final InvalidPayloadPolicy invalidPayload;
  private final DeviceBudgets budgets;
  private final DeviceApiMetrics metrics;
  private final LongSupplier clock;

  Uploads(
      DeviceInbox gateway,
      PayloadParser parser,
      DeadLetterStore deadLetters,
      InvalidPayloadPolicy invalidPayload,
      DeviceBudgets budgets,
      DeviceApiMetrics metrics,
      LongSupplier clock) {
    this.gateway = gateway;
    this.parser = parser;
    this.deadLetters = deadLetters;
    this.invalidPayload = invalidPayload;
    this.budgets = budgets;
    this.metrics = metrics;
    this.clock = clock;
  }

  /**
   * Stores {@code body} for {@code device}; completes with the answer once the outcome is known.
   */
  CompletionStage<HttpResponse> upload(Device device, Kind kind, byte[] body) {
    DeviceId id = device.id();
    long now = clock.getAsLong();
    DeviceMessage message;
    try {
      message =
          kind == Kind.TELEMETRY
              ? new DeviceMessage.PostTelemetry(id, now, parser.parseTelemetry(body, now))
              : new DeviceMessage.PostAttributes(id, now, parser.parseAttributes(body));
    } catch (PayloadFormatException e) {
      return invalid(id, kind, body, now, String.valueOf(e.getMessage()));
    }
    if (!budgets.startWrite(id)) {
      String why = "too many uploads of this device being stored at once";
      metrics.refused(Refusal.TOO_MANY_WRITES, id.toString(), why);
      return CompletableFuture.completedFuture(DeviceApi.tooMany(why, Duration.ofSeconds(1)));
    }
    CompletionStage<Ack> outcome;
    try {
      outcome = gateway.submit(message);
    } catch (RuntimeException e) {
      outcome = CompletableFuture.failedFuture(e);
    }
    return outcome.handle(
        (ack, error) -> {
          budgets.writeDone(id);
          return answer(id, ack, error);
        });
  }

  private HttpResponse answer(DeviceId id, @Nullable Ack ack, @Nullable Throwable error) {
    if (error == null && ack != null && ack.isStored()) {
      return HttpResponse.create().withStatus(StatusCodes.OK);
    }
    if (ack instanceof Ack.Rejected rejected && rejected.reason() == Ack.Reason.UNKNOWN_DEVICE) {
      metrics.refused(Refusal.UNKNOWN_TOKEN, id.toString(), "the device was deleted");
      return HttpErrors.error(401, "invalid access token: the device was deleted");
    }
    String detail = error != null ? String.valueOf(error) : String.valueOf(ack);
    metrics.writeFailed(id.toString(), detail);
    return HttpErrors.error(503, "not stored, try again later")
        .addHeader(RawHeader.create("Retry-After", "1"));
  }

  private CompletionStage<HttpResponse> invalid(
      DeviceId id, Kind kind, byte[] body, long now, String reason) {
    metrics.refused(Refusal.BAD_REQUEST, id.toString(), "invalid payload: " + reason);
    HttpResponse refused = HttpErrors.error(400, "invalid payload: " + reason);
    if (invalidPayload != InvalidPayloadPolicy.DEAD_LETTER) {
      return CompletableFuture.completedFuture(refused);
    }
    CompletionStage<Void> kept;
    try {
      kept = deadLetters.write(new DeadLetter(id, now, kind.deadLetterTopic, reason, body));
    } catch (RuntimeException e) {
      kept = CompletableFuture.failedFuture(e);
    }
    return kept.handle(
        (done, error) -> {
          if (error == null) {
            metrics.deadLettered();
          } else {
            metrics.deadLetterFailed(id.toString(), String.valueOf(error));
          }
          return refused;
        });
  }
}
