package io.fieldline.transport.mqtt.publish;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.common.pacing.RequestPacer;
import io.fieldline.transport.mqtt.MqttMetrics.AttributeRequestOutcome;
import io.fieldline.transport.mqtt.downlink.AttributeReads;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.downlink.DownlinkPayloads;
import io.fieldline.transport.mqtt.downlink.DownlinkTopics;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
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
 * <p>Also the connection's {@link AttributeReads}, which a gateway's session reads its children's
 * attributes through: one budget for both. Reads are paced like client-side RPC: {@code burst}
 * requests at once, then {@code rate} per second, beyond which reading the socket pauses; and at
 * most {@code burst} reads run at once, beyond which reading pauses until one completes ({@code
 * attribute-request-rate} and {@code -burst}; a gateway's connection has its own pair, {@code
 * gateway.attribute-request-rate} and {@code -burst}).
 *
 * <p>Confined to the channel's event loop; reads complete on it.
 */
final class AttributeRequests implements AttributeReads {

  private static final Logger LOG = LoggerFactory.getLogger(AttributeRequests.class);
  private static final LogThrottle READ_FAILURES = new LogThrottle();
  private static final CompletableFuture<List<AttributeKvEntry>> NONE =
      CompletableFuture.completedFuture(List.of());

  private final SessionContext context;
  private final Connection connection;
  private final Device device;
  private final SessionState session;
  private final Downlink downlink;
  private final RequestPacer pacer;
  private final int burst;
  private int reading;

  /**
   * @param rate requests per second before reading pauses; 0 = no pacing
   * @param burst requests at once on top of the rate; also the most reads running at once
   */
  AttributeRequests(
      SessionContext context,
      Connection connection,
      Device device,
      SessionState session,
      Downlink downlink,
      int rate,
      int burst) {
    this.context = context;
    this.connection = connection;
    this.device = device;
    this.session = session;
    this.downlink = downlink;
    this.burst = burst;
    this.pacer = new RequestPacer(rate, burst, now());
  }

  /** A request with the id of its topic; the PUBLISH itself is acknowledged by the caller. */
  void onRequest(String requestId, byte[] payload) {
    pace();
    String topic = DownlinkTopics.ATTRIBUTES_RESPONSE_PREFIX + requestId;
    AttributeRequest request;
    try {
      request = AttributeRequest.parse(payload);
    } catch (IllegalArgumentException e) {
      // parse always says what is wrong; the fallback only satisfies the type.
      String error = Objects.requireNonNullElse(e.getMessage(), "invalid attribute request");
      answer(topic, DownlinkPayloads.error(error), AttributeRequestOutcome.INVALID);
      return;
    }
    Set<String> all = Set.of();
    readPaced(
            device.id(),
            request.everything() ? all : request.clientKeys(),
            request.everything() ? all : request.sharedKeys())
        .whenComplete(
            (values, error) ->
                onRead(
                    topic,
                    values == null
                        ? null
                        : DownlinkPayloads.attributes(values.client(), values.shared()),
                    error));
  }

  @Override
  public CompletionStage<Values> read(
      DeviceId id, @Nullable Set<String> clientKeys, @Nullable Set<String> sharedKeys) {
    pace();
    return readPaced(id, clientKeys, sharedKeys);
  }

  private void pace() {
    assert connection.ctx().executor().inEventLoop();
    Duration pause = pacer.delayAfter(now());
    if (!pause.isZero()) {
      connection.pauseFor(Pause.ATTRIBUTE_RATE, pause);
    }
  }

  // Counted against the pace already; completes on the event loop.
  private CompletionStage<Values> readPaced(
      DeviceId id, @Nullable Set<String> clientKeys, @Nullable Set<String> sharedKeys) {
    reading++;
    if (reading >= burst) {
      connection.pause(Pause.ATTRIBUTE_READS);
    }
    CompletableFuture<Values> done = new CompletableFuture<>();
    keysOf(id, AttributeScope.CLIENT_SCOPE, clientKeys)
        .thenCombine(keysOf(id, AttributeScope.SHARED_SCOPE, sharedKeys), Values::new)
        .whenCompleteAsync(
            (values, error) -> {
              reading--;
              if (reading < burst) {
                connection.resume(Pause.ATTRIBUTE_READS);
              }
              if (error != null) {
                done.completeExceptionally(error);
              } else {
                done.complete(values);
              }
            },
            connection.ctx().channel().eventLoop());
    return done;
  }

  private CompletionStage<List<AttributeKvEntry>> keysOf(
      DeviceId id, AttributeScope scope, @Nullable Set<String> keys) {
    if (keys == null) {
      return NONE;
    }
    try {
      return context
          .queries()
          .attributes(id, scope, keys.isEmpty() ? Optional.empty() : Optional.of(keys));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void onRead(String topic, byte @Nullable [] values, @Nullable Throwable error) {
    if (!connection.isConnected()) {
      context.metrics().attributeRequest(AttributeRequestOutcome.DROPPED);
      return;
    }
    if (error != null || values == null) {
      READ_FAILURES.warn(
          LOG,
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
