package io.fieldline.transport.mqtt;

import io.fieldline.transport.mqtt.session.CloseReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The transport's meters. Names are {@code fieldline.mqtt.*}; every tag comes from an enum, never
 * from a device or client id. Thread-safe.
 */
public final class MqttMetrics {

  /** How a CONNECT ended. */
  public enum ConnectResult {
    ACCEPTED,
    BAD_CREDENTIALS,
    NOT_AUTHORIZED,
    SERVER_UNAVAILABLE,
    UNSUPPORTED_VERSION,
    IDENTIFIER_REJECTED,
    /** MQTT 5: a CONNECT property with a value the protocol forbids. */
    PROTOCOL_ERROR,
    /** MQTT 5: enhanced authentication (an Authentication Method) asked for. */
    BAD_AUTHENTICATION_METHOD,
    /** Refused without a lookup: the source address spent its failed-authentication budget. */
    RATE_LIMITED
  }

  /** Why reading a socket was paused. */
  public enum PauseCause {
    /** The connection's in-flight window is full. */
    WINDOW,
    /** The storage layer is overloaded (global bound). */
    STORAGE,
    /** The client does not read what is sent to it ({@code outbound-high-water}). */
    OUTBOUND,
    /** The client sends client-side RPC requests faster than {@code client-rpc-rate}. */
    RPC_RATE
  }

  private final MeterRegistry registry;
  private final AtomicInteger connections = new AtomicInteger();
  private final Map<ConnectResult, Counter> connects = new EnumMap<>(ConnectResult.class);
  private final Counter[] publishReceived = new Counter[3];
  private final Counter pubackSent;
  private final Counter pubrecSent;
  private final Map<CloseReason, Counter> rejected = new EnumMap<>(CloseReason.class);
  private final Counter invalidPayloads;
  private final Counter deadLetters;
  private final Counter writeFailures;
  private final Counter qos2Forgotten;
  private final Map<PauseCause, Counter> pauses = new EnumMap<>(PauseCause.class);
  private final Timer ackLatency;

  public MqttMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("fieldline.mqtt.connections", connections, AtomicInteger::get)
        .description("Open MQTT connections")
        .register(registry);
    for (ConnectResult result : ConnectResult.values()) {
      connects.put(
          result,
          Counter.builder("fieldline.mqtt.connects")
              .tag("result", result.name().toLowerCase(Locale.ROOT))
              .description("CONNECT packets by outcome")
              .register(registry));
    }
    for (int qos = 0; qos < 3; qos++) {
      publishReceived[qos] =
          Counter.builder("fieldline.mqtt.publish.received")
              .tag("qos", Integer.toString(qos))
              .description("PUBLISH packets received from devices")
              .register(registry);
    }
    pubackSent =
        Counter.builder("fieldline.mqtt.puback.sent")
            .description("PUBACKs sent, each after its message was stored")
            .register(registry);
    pubrecSent =
        Counter.builder("fieldline.mqtt.pubrec.sent")
            .description("PUBRECs sent (QoS 2), each after its message was stored")
            .register(registry);
    for (CloseReason reason : CloseReason.values()) {
      if (reason.rejected()) {
        rejected.put(reason, rejectedCounter(registry, reason.tag()));
      }
    }
    // Invalid payloads are rejected inputs too, whether dead-lettered or closed: one
    // rejected{reason=payload} for both policies (docs/mqtt-api.md), deadletters tells them apart.
    invalidPayloads = rejected.get(CloseReason.PAYLOAD);
    deadLetters =
        Counter.builder("fieldline.mqtt.deadletters")
            .description(
                "PUBLISHes stored in the dead-letter table and acknowledged: invalid payloads"
                    + " and unknown topics")
            .register(registry);
    writeFailures =
        Counter.builder("fieldline.mqtt.write.failures")
            .description("PUBLISHes not acknowledged because storing them failed or timed out")
            .register(registry);
    qos2Forgotten =
        Counter.builder("fieldline.mqtt.qos2.forgotten")
            .description(
                "QoS 2 packet ids forgotten before their PUBREL: the session held"
                    + " max-awaiting-release")
            .register(registry);
    for (PauseCause cause : PauseCause.values()) {
      pauses.put(
          cause,
          Counter.builder("fieldline.mqtt.backpressure.pauses")
              .tag("cause", cause.name().toLowerCase(Locale.ROOT))
              .description("Times reading a socket was paused by backpressure")
              .register(registry));
    }
    ackLatency =
        Timer.builder("fieldline.mqtt.ack.latency")
            .description("Time from receiving a QoS 1/2 PUBLISH to sending its PUBACK/PUBREC")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofSeconds(30))
            .register(registry);
  }

  private static Counter rejectedCounter(MeterRegistry registry, String reason) {
    return Counter.builder("fieldline.mqtt.rejected")
        .tag("reason", reason)
        .description("Bad inputs by reason")
        .register(registry);
  }

  /** Registers the gauge of open connections not yet authenticated. */
  public void unauthenticatedConnections(Supplier<Number> count) {
    Gauge.builder("fieldline.mqtt.connections.unauthenticated", count)
        .description("Open MQTT connections not yet authenticated (CONNACK 0x00 not sent)")
        .register(registry);
  }

  public void connectionOpened() {
    connections.incrementAndGet();
  }

  public void connectionClosed() {
    connections.decrementAndGet();
  }

  public int openConnections() {
    return connections.get();
  }

  public void connect(ConnectResult result) {
    connects.get(result).increment();
  }

  public void publishReceived(int qos) {
    publishReceived[qos].increment();
  }

  public void acknowledged(boolean pubrec, long receivedNanos) {
    (pubrec ? pubrecSent : pubackSent).increment();
    ackLatency.record(System.nanoTime() - receivedNanos, TimeUnit.NANOSECONDS);
  }

  public void closed(CloseReason reason) {
    Counter counter = rejected.get(reason);
    if (counter != null) {
      counter.increment();
    }
  }

  public void deadLettered() {
    invalidPayloads.increment();
    deadLetters.increment();
  }

  /** A PUBLISH to a topic outside the device API, kept as a dead letter and acknowledged. */
  public void unknownTopicDeadLettered() {
    rejected.get(CloseReason.TOPIC).increment();
    deadLetters.increment();
  }

  public void writeFailed() {
    writeFailures.increment();
  }

  public void qos2Forgotten() {
    qos2Forgotten.increment();
  }

  public void paused(PauseCause cause) {
    pauses.get(cause).increment();
  }
}
