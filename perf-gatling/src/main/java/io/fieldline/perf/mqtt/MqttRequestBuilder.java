package io.fieldline.perf.mqtt;

import java.time.Duration;

/** Chooses what a named MQTT request does. */
public final class MqttRequestBuilder {

  private final String requestName;

  MqttRequestBuilder(String requestName) {
    this.requestName = requestName;
  }

  /** TCP connect + CONNECT → CONNACK, timed as one request. */
  public ConnectActionBuilder connect() {
    return new ConnectActionBuilder(requestName, null, null, null);
  }

  /** PUBLISH to a topic (Gatling EL allowed); QoS 1 is timed PUBLISH → PUBACK. */
  public PublishActionBuilder publish(String topic) {
    return new PublishActionBuilder(requestName, topic, 1, PublishActionBuilder.EMPTY);
  }

  /** SUBSCRIBE to a topic filter (Gatling EL allowed), timed SUBSCRIBE → SUBACK. */
  public SubscribeActionBuilder subscribe(String topicFilter) {
    return new SubscribeActionBuilder(requestName, topicFilter, 1);
  }

  /**
   * Makes the device answer every server-side RPC request at once, for the rest of its connection:
   * subscribes to {@code v1/devices/me/rpc/request/+} (timed SUBSCRIBE → SUBACK) and answers each
   * request on {@code v1/devices/me/rpc/response/{n}} with {@code {"ok":true,"n":n,"request":<the
   * request>}} on the event loop, without a Gatling action per request (see {@link
   * RespondToRpcActionBuilder}).
   */
  public RespondToRpcActionBuilder respondToRpc() {
    return new RespondToRpcActionBuilder(requestName, 1);
  }

  /** Waits for the next PUBLISH from the broker; KO when none arrives within {@code timeout}. */
  public AwaitMessageActionBuilder awaitMessage(Duration timeout) {
    return new AwaitMessageActionBuilder(requestName, timeout, null);
  }

  /**
   * Closes the user's connection without DISCONNECT, as a network outage would (not timed); the
   * next {@code connect()} of the user measures how long it took to publish again.
   */
  public DropActionBuilder drop() {
    return new DropActionBuilder(requestName);
  }

  /** Sends DISCONNECT and closes the user's connection (not timed). */
  public DisconnectActionBuilder disconnect() {
    return new DisconnectActionBuilder(requestName);
  }
}
