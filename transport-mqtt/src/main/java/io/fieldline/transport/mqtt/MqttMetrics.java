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
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
    /** MQTT 5: a CONNECT or Will property other than User Property given more than once. */
    REPEATED_PROPERTY,
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
    RPC_RATE,
    /**
     * The client sends attribute requests faster than {@code attribute-request-rate}, or has {@code
     * attribute-request-burst} reads running.
     */
    ATTRIBUTE_REQUESTS,
    /**
     * A gateway session waits for its turn to create children ({@code
     * gateway.max-concurrent-creations} run on the node).
     */
    GATEWAY_CREATIONS
  }

  /** What became of a message sent, or meant to be sent, to a device. */
  public enum DownlinkOutcome {
    /** Written to the socket for the first time (QoS 0 or 1). */
    SENT,
    /** Written again with the DUP flag: not acknowledged in time (3.1.1) or after a reconnect. */
    RETRANSMITTED,
    /** A QoS 1 message acknowledged by the device (PUBACK). */
    ACKNOWLEDGED,
    /**
     * Not taken: the session already holds {@code downlink.max-queued} messages or {@code
     * downlink.max-queued-bytes} (a server-side RPC is offered again later; a push is dropped).
     */
    QUEUE_FULL,
    /** Given up: larger than the client's Maximum Packet Size (MQTT 5). */
    TOO_LARGE,
    /** Given up: a server-side RPC whose expiration time passed before it was sent. */
    EXPIRED,
    /** Given up with the session: its connection closed and the session was not kept, or ended. */
    DISCARDED
  }

  /** What became of a server-side RPC a session was offered. */
  public enum RpcOutcome {
    /** Taken by a session (subscribed, with room). */
    TAKEN,
    /** Acknowledged by the device (QoS 1) or written to it (QoS 0). */
    DELIVERED,
    /**
     * The device answered on {@code v1/devices/me/rpc/response/{n}}, or its gateway on {@code
     * v1/gateway/rpc}.
     */
    RESPONDED,
    /** Given up before delivery (reported to its callback as undelivered). */
    UNDELIVERED,
    /** A two-way request not answered within its timeout: the session forgot it. */
    TIMED_OUT,
    /** An answer (either topic) for no request of that device pending. */
    UNKNOWN_RESPONSE
  }

  /** How an attribute request ({@code v1/devices/me/attributes/request/{n}}) ended. */
  public enum AttributeRequestOutcome {
    /** Answered with the values read. */
    ANSWERED,
    /** The request was not understood: answered with an error. */
    INVALID,
    /** Reading the attributes failed: answered with an error. */
    FAILED,
    /** The answer was not sent: the session's downlink queue was full or the connection closed. */
    DROPPED
  }

  /** The gateway API's topics ({@code v1/gateway/*}) a gateway publishes to. */
  public enum GatewayTopic {
    CONNECT,
    DISCONNECT,
    TELEMETRY,
    ATTRIBUTES,
    /** {@code v1/gateway/attributes/request}: a child's attribute values asked for. */
    ATTRIBUTES_REQUEST,
    /** {@code v1/gateway/rpc}: a child's answer to a server-side RPC. */
    RPC
  }

  /** Why a gateway PUBLISH was refused. */
  public enum GatewayRefusal {
    /** A device that is not a gateway published to a gateway topic. */
    NOT_GATEWAY,
    /** The message named more than {@code gateway.max-devices-per-message} devices. */
    TOO_MANY_DEVICES,
    /** The message would bring the session above {@code gateway.max-children} children. */
    TOO_MANY_CHILDREN,
    /**
     * The message names a device the gateway may not act for: neither created by it nor linked to
     * it by an administrator (nor, with {@code gateway.adopt-existing-devices}, owned by no
     * gateway).
     */
    NOT_OWNER
  }

  private final MeterRegistry registry;
  private final AtomicInteger connections = new AtomicInteger();
  // Counters per enum constant: arrays indexed by ordinal, filled for every constant (no miss).
  private final Counter[] connects;
  private final Counter[] publishReceived = new Counter[3];
  private final Counter pubackSent;
  private final Counter pubrecSent;
  private final Map<CloseReason, Counter> rejected = new EnumMap<>(CloseReason.class);
  private final Counter invalidPayloads;
  private final Counter deadLetters;
  private final Counter writeFailures;
  private final Counter qos2Forgotten;
  private final Counter[] pauses;
  private final Timer ackLatency;
  private final Counter[] downlink;
  private final Counter[] rpc;
  private final Counter[] attributeRequests;
  private final Counter[] gatewayMessages;
  private final Map<GatewayTopic, Counter> gatewayPoints = new EnumMap<>(GatewayTopic.class);
  private final Counter[] gatewayRefusals;
  private final Counter gatewayChildrenCreated;
  private final Counter gatewayTimestampsReused;
  private final AtomicLong gatewayChildren = new AtomicLong();
  private final AtomicLong downlinkHeld = new AtomicLong();
  private final AtomicLong downlinkHeldBytes = new AtomicLong();

  public MqttMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("fieldline.mqtt.connections", connections, AtomicInteger::get)
        .description("Open MQTT connections")
        .register(registry);
    connects =
        perConstant(
            registry,
            "fieldline.mqtt.connects",
            "result",
            "CONNECT packets by outcome",
            ConnectResult.class);
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
    // PAYLOAD is a rejected() reason: its counter was registered just above.
    invalidPayloads = Objects.requireNonNull(rejected.get(CloseReason.PAYLOAD));
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
    pauses =
        perConstant(
            registry,
            "fieldline.mqtt.backpressure.pauses",
            "cause",
            "Times reading a socket was paused by backpressure",
            PauseCause.class);
    ackLatency =
        Timer.builder("fieldline.mqtt.ack.latency")
            .description("Time from receiving a QoS 1/2 PUBLISH to sending its PUBACK/PUBREC")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofSeconds(30))
            .register(registry);
    downlink =
        byOutcome(
            registry,
            "fieldline.mqtt.downlink",
            "Messages to devices (pushes, answers, RPC requests) by outcome",
            DownlinkOutcome.class);
    rpc =
        byOutcome(
            registry,
            "fieldline.mqtt.rpc",
            "Server-side RPC requests offered to MQTT sessions, by outcome",
            RpcOutcome.class);
    attributeRequests =
        byOutcome(
            registry,
            "fieldline.mqtt.attribute.requests",
            "Attribute requests of devices, by outcome",
            AttributeRequestOutcome.class);
    gatewayMessages =
        perConstant(
            registry,
            "fieldline.mqtt.gateway.messages",
            "topic",
            "PUBLISHes of gateways to v1/gateway/* topics, refused ones included",
            GatewayTopic.class);
    for (GatewayTopic topic : GatewayTopic.values()) {
      String tag = topic.name().toLowerCase(Locale.ROOT);
      if (topic == GatewayTopic.TELEMETRY || topic == GatewayTopic.ATTRIBUTES) {
        gatewayPoints.put(
            topic,
            Counter.builder("fieldline.mqtt.gateway.points")
                .tag("topic", tag)
                .description(
                    "Values of child devices stored through gateways (counted when the whole"
                        + " message is stored)")
                .register(registry));
      }
    }
    gatewayRefusals =
        perConstant(
            registry,
            "fieldline.mqtt.gateway.refused",
            "reason",
            "Gateway PUBLISHes refused whole, by reason",
            GatewayRefusal.class);
    gatewayChildrenCreated =
        // Not "...children.created": Prometheus reserves the _created suffix of counters.
        Counter.builder("fieldline.mqtt.gateway.child.creations")
            .description("Child devices created by gateways (connect or first data)")
            .register(registry);
    gatewayTimestampsReused =
        Counter.builder("fieldline.mqtt.gateway.timestamps.reused")
            .description(
                "Retransmitted gateway PUBLISHes whose values without ts got the first copy's"
                    + " time again")
            .register(registry);
    Gauge.builder("fieldline.mqtt.gateway.children", gatewayChildren, AtomicLong::get)
        .description(
            "Child devices the gateway sessions of this node hold and listen to (shared"
                + " attributes, server-side RPC)")
        .register(registry);
    Gauge.builder("fieldline.mqtt.downlink.held", downlinkHeld, AtomicLong::get)
        .description("Messages held for devices: queued, or sent at QoS 1 and not acknowledged")
        .register(registry);
    Gauge.builder("fieldline.mqtt.downlink.held.bytes", downlinkHeldBytes, AtomicLong::get)
        .description("Payload and topic bytes of the messages held for devices")
        .register(registry);
  }

  // One counter per value of an outcome enum, tagged outcome=<value in lower case>.
  private static <E extends Enum<E>> Counter[] byOutcome(
      MeterRegistry registry, String name, String description, Class<E> outcomes) {
    return perConstant(registry, name, "outcome", description, outcomes);
  }

  // One counter per constant of an enum, at the constant's ordinal, tagged
  // <tag>=<constant in lower case>.
  private static <E extends Enum<E>> Counter[] perConstant(
      MeterRegistry registry, String name, String tag, String description, Class<E> type) {
    E[] constants = type.getEnumConstants();
    Counter[] counters = new Counter[constants.length];
    for (E constant : constants) {
      counters[constant.ordinal()] =
          Counter.builder(name)
              .tag(tag, constant.name().toLowerCase(Locale.ROOT))
              .description(description)
              .register(registry);
    }
    return counters;
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
    connects[result.ordinal()].increment();
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
    // TOPIC is a rejected() reason: the constructor registered its counter.
    Objects.requireNonNull(rejected.get(CloseReason.TOPIC)).increment();
    deadLetters.increment();
  }

  public void writeFailed() {
    writeFailures.increment();
  }

  public void qos2Forgotten() {
    qos2Forgotten.increment();
  }

  public void paused(PauseCause cause) {
    pauses[cause.ordinal()].increment();
  }

  public void downlink(DownlinkOutcome outcome) {
    downlink[outcome.ordinal()].increment();
  }

  public void rpc(RpcOutcome outcome) {
    rpc[outcome.ordinal()].increment();
  }

  public void attributeRequest(AttributeRequestOutcome outcome) {
    attributeRequests[outcome.ordinal()].increment();
  }

  /** A gateway PUBLISH to {@code topic} (counted before it is parsed). */
  public void gatewayMessage(GatewayTopic topic) {
    gatewayMessages[topic.ordinal()].increment();
  }

  /** {@code points} values of a gateway message to {@code topic} were stored. */
  public void gatewayPointsStored(GatewayTopic topic, int points) {
    Counter counter = gatewayPoints.get(topic);
    if (counter != null) {
      counter.increment(points);
    }
  }

  /**
   * A gateway PUBLISH refused whole for {@code reason}; {@code deadLettered} when it was kept in
   * the dead-letter table (and acknowledged) rather than closing the connection.
   */
  public void gatewayRefused(GatewayRefusal reason, boolean deadLettered) {
    gatewayRefusals[reason.ordinal()].increment();
    if (deadLettered) {
      deadLetters.increment();
    }
  }

  public void gatewayChildCreated() {
    gatewayChildrenCreated.increment();
  }

  public void gatewayTimestampsReused() {
    gatewayTimestampsReused.increment();
  }

  /** Gateway sessions listen to {@code delta} more (or fewer) children. */
  public void gatewayChildrenListened(int delta) {
    gatewayChildren.addAndGet(delta);
  }

  /** Messages (and their bytes) held for devices changed by the given amounts. */
  public void held(int messages, long bytes) {
    downlinkHeld.addAndGet(messages);
    downlinkHeldBytes.addAndGet(bytes);
  }
}
