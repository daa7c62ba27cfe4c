package io.fieldline.transport.mqtt.publish;

import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.Device;
import io.fieldline.transport.mqtt.MqttMetrics.AttributeRequestOutcome;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.downlink.DownlinkPayloads;
import io.fieldline.transport.mqtt.downlink.DownlinkTopics;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.RateLimitedLog;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers attribute requests ({@code v1/devices/me/attributes/request/{id}}) with ThingsBoard's
 * semantics: keys of both scopes → those keys; keys of one scope → only that scope; no keys → every
 * client and every shared attribute. The answer {@code {"client": {...}, "shared": {...}}} (a scope
 * with nothing found left out) goes to {@code v1/devices/me/attributes/response/{id}} through the
 * session's downlink, at the QoS of the device's subscription to {@code
 * v1/devices/me/attributes/response/+} (QoS 0 without one: the device still gets its answer). A
 * request that is not understood, or whose read fails, is answered {@code {"error": "..."}}.
 *
 * <p>Reads are paced like client-side RPC: {@code attribute-request-burst} at once, then {@code
 * attribute-request-rate} per second, beyond which reading the socket pauses; and at most {@code
 * attribute-request-burst} reads run at once, beyond which reading pauses until one completes.
 *
 * <p>Confined to the channel's event loop; reads complete on it.
 */
final class AttributeRequests {

  private static final Logger LOG = LoggerFactory.getLogger(AttributeRequests.class);
  private static final RateLimitedLog READ_FAILURES = new RateLimitedLog(LOG, 10, TimeUnit.SECONDS);
  private static final CompletableFuture<List<AttributeKvEntry>> NONE =
      CompletableFuture.completedFuture(List.of());

  private final SessionContext context;
  private final Connection connection;
  private final Device device;
  private final SessionState session;
  private final Downlink downlink;
  private final RequestPacer pacer;
  private int reading;

  AttributeRequests(
      SessionContext context,
      Connection connection,
      Device device,
      SessionState session,
      Downlink downlink) {
    this.context = context;
    this.connection = connection;
    this.device = device;
    this.session = session;
    this.downlink = downlink;
    this.pacer =
        new RequestPacer(
            context.config().attributeRequestRate(),
            context.config().attributeRequestBurst(),
            now());
  }

  /** A request with the id of its topic; the PUBLISH itself is acknowledged by the caller. */
  void onRequest(String requestId, byte[] payload) {
    Duration pause = pacer.delayAfter(now());
    if (!pause.isZero()) {
      connection.pauseFor(Pause.ATTRIBUTE_RATE, pause);
    }
    String topic = DownlinkTopics.ATTRIBUTES_RESPONSE_PREFIX + requestId;
    AttributeRequest request;
    try {
      request = AttributeRequest.parse(payload);
    } catch (IllegalArgumentException e) {
      answer(topic, DownlinkPayloads.error(e.getMessage()), AttributeRequestOutcome.INVALID);
      return;
    }
    reading++;
    if (reading >= context.config().attributeRequestBurst()) {
      connection.pause(Pause.ATTRIBUTE_READS);
    }
    CompletionStage<List<AttributeKvEntry>> client =
        request.everything()
            ? read(AttributeScope.CLIENT_SCOPE, Optional.empty())
            : keysOf(AttributeScope.CLIENT_SCOPE, request.clientKeys());
    CompletionStage<List<AttributeKvEntry>> shared =
        request.everything()
            ? read(AttributeScope.SHARED_SCOPE, Optional.empty())
            : keysOf(AttributeScope.SHARED_SCOPE, request.sharedKeys());
    client
        .thenCombine(shared, DownlinkPayloads::attributes)
        .whenCompleteAsync(
            (values, error) -> onRead(topic, values, error),
            connection.ctx().channel().eventLoop());
  }

  private CompletionStage<List<AttributeKvEntry>> keysOf(
      AttributeScope scope, @Nullable Set<String> keys) {
    return keys == null ? NONE : read(scope, Optional.of(keys));
  }

  private CompletionStage<List<AttributeKvEntry>> read(
      AttributeScope scope, Optional<Set<String>> keys) {
    try {
      return context.queries().attributes(device.id(), scope, keys);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void onRead(String topic, byte @Nullable [] values, @Nullable Throwable error) {
    reading--;
    if (reading < context.config().attributeRequestBurst()) {
      connection.resume(Pause.ATTRIBUTE_READS);
    }
    if (!connection.isConnected()) {
      context.metrics().attributeRequest(AttributeRequestOutcome.DROPPED);
      return;
    }
    if (error != null || values == null) {
      READ_FAILURES.warn(
          "{} attribute request not answered with values: {}",
          connection.logPrefix(),
          String.valueOf(error));
      answer(
          topic,
          DownlinkPayloads.error("attributes could not be read, try again later"),
          AttributeRequestOutcome.FAILED);
      return;
    }
    answer(topic, values, AttributeRequestOutcome.ANSWERED);
  }

  private void answer(String topic, byte[] payload, AttributeRequestOutcome outcome) {
    int qos = Math.max(0, DownlinkTopics.qos(session, DownlinkTopics.ATTRIBUTES_RESPONSE_FILTER));
    if (!downlink.fits(topic, payload.length, qos)) {
      // MQTT 5 §3.1.2.11.4: not sent as it is; the device learns why instead of waiting forever.
      payload =
          DownlinkPayloads.error(
              "the answer of "
                  + payload.length
                  + " bytes exceeds the client's maximum packet size");
      outcome = AttributeRequestOutcome.FAILED;
    }
    context
        .metrics()
        .attributeRequest(
            downlink.answer(topic, payload, qos) ? outcome : AttributeRequestOutcome.DROPPED);
  }

  // The clock the pauses are scheduled on (the system's, but a test's event loop may freeze it).
  private long now() {
    return connection.ctx().executor().ticker().nanoTime();
  }
}
