package io.fieldline.transport.mqtt.connect;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * Packets a client pipelined behind its CONNECT, held until CONNACK. The socket is not read while
 * the token is looked up, but the read that carried CONNECT may carry more packets; they wait here,
 * in arrival order, up to {@code max-queued-before-connack}. The queue owns a reference to each
 * packet until it is taken out or released.
 *
 * <p>Confined to the channel's event loop.
 */
final class PreConnackQueue {

  private final ArrayDeque<MqttMessage> packets = new ArrayDeque<>();
  private final int capacity;

  PreConnackQueue(int capacity) {
    this.capacity = capacity;
  }

  int capacity() {
    return capacity;
  }

  /**
   * Keeps {@code packet} at the tail.
   *
   * @return false if the queue is full: the packet is not kept and the caller still owns it
   */
  boolean offer(MqttMessage packet) {
    if (packets.size() >= capacity) {
      return false;
    }
    packets.addLast(packet);
    return true;
  }

  /** The oldest packet, now owned by the caller, or {@code null} if none is left. */
  @Nullable MqttMessage poll() {
    return packets.pollFirst();
  }

  /** Releases every packet still queued (the connection closed before they were handled). */
  void releaseAll() {
    MqttMessage packet;
    while ((packet = packets.pollFirst()) != null) {
      ReferenceCountUtil.release(packet);
    }
  }
}
