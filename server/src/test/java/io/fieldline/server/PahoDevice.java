package io.fieldline.server;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.jspecify.annotations.Nullable;

/**
 * A device on Eclipse Paho (MQTT 3.1.1) as ThingsBoard firmware uses the device API: it keeps every
 * message it receives, and answers server-side RPC requests with what its responder returns (no
 * answer when it returns null).
 */
public final class PahoDevice implements AutoCloseable {

  /** One message received: its topic and payload. */
  public record Received(String topic, String payload) {}

  public static final String RPC_REQUESTS = "v1/devices/me/rpc/request/+";
  public static final String RPC_REQUEST_PREFIX = "v1/devices/me/rpc/request/";
  public static final String RPC_RESPONSE_PREFIX = "v1/devices/me/rpc/response/";

  public final List<Received> received = new CopyOnWriteArrayList<>();
  private final MqttClient client;
  private volatile @Nullable BiFunction<String, String, @Nullable String> responder;

  public PahoDevice(int port, String token, boolean cleanSession) throws MqttException {
    client = new MqttClient("tcp://127.0.0.1:" + port, "paho-" + token, new MemoryPersistence());
    MqttConnectOptions options = new MqttConnectOptions();
    options.setUserName(token);
    options.setCleanSession(cleanSession);
    options.setAutomaticReconnect(false);
    options.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
    client.connect(options);
  }

  /** Subscribes to {@link #RPC_REQUESTS}, answering each request with {@code responder}. */
  public PahoDevice answering(int qos, BiFunction<String, String, @Nullable String> responder)
      throws MqttException {
    this.responder = responder;
    subscribe(RPC_REQUESTS, qos);
    return this;
  }

  public PahoDevice subscribe(String filter, int qos) throws MqttException {
    client.subscribe(filter, qos, this::arrived);
    return this;
  }

  public void publish(String topic, String payload) throws MqttException {
    client.publish(topic, payload.getBytes(StandardCharsets.UTF_8), 1, false);
  }

  public List<Received> on(String topicPrefix) {
    return received.stream().filter(m -> m.topic().startsWith(topicPrefix)).toList();
  }

  private void arrived(String topic, MqttMessage message) throws MqttException {
    String payload = new String(message.getPayload(), StandardCharsets.UTF_8);
    received.add(new Received(topic, payload));
    BiFunction<String, String, @Nullable String> answer = responder;
    if (answer != null && topic.startsWith(RPC_REQUEST_PREFIX)) {
      String response = answer.apply(topic, payload);
      if (response != null) {
        String id = topic.substring(RPC_REQUEST_PREFIX.length());
        // Paho forbids a blocking publish on its callback thread: hand it over.
        new Thread(
                () -> {
                  try {
                    publish(RPC_RESPONSE_PREFIX + id, response);
                  } catch (MqttException e) {
                    throw new IllegalStateException(e);
                  }
                },
                "paho-device-answer")
            .start();
      }
    }
  }

  public boolean isConnected() {
    return client.isConnected();
  }

  @Override
  public void close() throws MqttException {
    if (client.isConnected()) {
      client.disconnect();
    }
    client.close();
  }
}
