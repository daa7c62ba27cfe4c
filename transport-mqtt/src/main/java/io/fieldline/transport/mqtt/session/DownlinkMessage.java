package io.fieldline.transport.mqtt.session;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * One PUBLISH the server holds for its device until it is delivered: a shared-attribute push, an
 * answer to an attribute request, or a server-side RPC request ({@link #rpc()} not null). The
 * payload is kept as bytes, so a QoS 1 message can be written again (DUP) as often as needed.
 *
 * <p>Built on any thread; then owned by one connection's event loop at a time. It moves between
 * connections only through {@link DownlinkState}, which synchronizes the hand-over.
 */
public final class DownlinkMessage {

  private final String topic;
  private final byte[] payload;
  private final int qos;
  private final @Nullable RpcDelivery rpc;
  private final int heldBytes;
  // 0 until first written at QoS 1; then kept for every retransmission (MQTT 3.1.1 §4.4).
  private int packetId;
  private long lastSentNanos;
  // Set by the write listener, which may run after the message moved to a newer connection.
  private volatile boolean written;

  /**
   * @param qos 0 or 1: the server never sends QoS 2
   */
  public DownlinkMessage(String topic, byte[] payload, int qos, @Nullable RpcDelivery rpc) {
    if (qos != 0 && qos != 1) {
      throw new IllegalArgumentException("downlink QoS must be 0 or 1: " + qos);
    }
    this.topic = topic;
    this.payload = payload;
    this.qos = qos;
    this.rpc = rpc;
    this.heldBytes = payload.length + topic.getBytes(StandardCharsets.UTF_8).length;
  }

  public String topic() {
    return topic;
  }

  public byte[] payload() {
    return payload;
  }

  public int qos() {
    return qos;
  }

  public @Nullable RpcDelivery rpc() {
    return rpc;
  }

  /** What holding it costs: payload and topic bytes (counted against the session's bound). */
  public int heldBytes() {
    return heldBytes;
  }

  /** The packet id it is written with at QoS 1, 0 until its first write. */
  public int packetId() {
    return packetId;
  }

  public void packetId(int id) {
    packetId = id;
  }

  /**
   * Whether a write of it reached the socket. Having a packet id is not enough: a write that failed
   * (the connection died in that flush) never reached the device, so the next one is its first — no
   * DUP, and it is reported sent then.
   */
  public boolean written() {
    return written;
  }

  public void markWritten() {
    written = true;
  }

  public long lastSentNanos() {
    return lastSentNanos;
  }

  public void lastSentNanos(long nanos) {
    lastSentNanos = nanos;
  }
}
