package io.fieldline.perf.mqtt;

/**
 * Entry points of the MQTT Java DSL.
 *
 * <pre>{@code
 * MqttProtocolBuilder protocol = mqtt().host("127.0.0.1").port(1883).keepAlive(60);
 * exec(mqtt("connect").connect().username("#{token}"))
 *     .exitHereIfFailed()
 *     .exec(mqtt("publish").publish("v1/devices/me/telemetry").qos(1).payload(factory));
 * // a device answering the server's RPC requests (two-way RPC) for as long as it stays connected:
 * exec(mqtt("connect").connect().username("#{token}"))
 *     .exec(mqtt("rpc subscribe").respondToRpc())
 *     .pause(Duration.ofMinutes(2));
 * }</pre>
 */
public final class MqttDsl {

  private MqttDsl() {}

  /** The protocol with its defaults (127.0.0.1:1883, keep-alive 60 s, clean session). */
  public static MqttProtocolBuilder mqtt() {
    return new MqttProtocolBuilder(MqttProtocol.defaults());
  }

  /** A request named {@code requestName} in the report. */
  public static MqttRequestBuilder mqtt(String requestName) {
    return new MqttRequestBuilder(requestName);
  }

  /**
   * Whether the user holds an open MQTT connection (CONNACK received, not closed since): for
   * reconnect loops such as {@code asLongAs(s -> !MqttDsl.isConnected(s))}. Read on the user's own
   * event loop, where Gatling evaluates conditions.
   */
  public static boolean isConnected(io.gatling.javaapi.core.Session session) {
    MqttConnection connection = MqttConnection.of(session.asScala());
    return connection != null && connection.isConnected();
  }
}
