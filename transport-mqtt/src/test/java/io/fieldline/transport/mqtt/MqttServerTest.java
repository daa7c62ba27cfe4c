package io.fieldline.transport.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.common.port.SessionCloser;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.fieldline.transport.mqtt.testkit.FakeDeadLetterStore;
import io.fieldline.transport.mqtt.testkit.FakeDeviceInbox;
import io.fieldline.transport.mqtt.testkit.FakeDeviceRegistry;
import io.fieldline.transport.mqtt.testkit.FakeTelemetryQueries;
import io.fieldline.transport.mqtt.testkit.TestConfigs;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The server on a real socket (127.0.0.1, port 0) with Eclipse Paho as the client. */
class MqttServerTest {

  private static final String TOKEN = "paho-token";
  private static final String TELEMETRY = "v1/devices/me/telemetry";
  private static final Duration SETTLE = Duration.ofMillis(300);
  private static final Duration WAIT = Duration.ofSeconds(5);

  private final FakeDeviceRegistry registry = new FakeDeviceRegistry();
  private final FakeDeviceInbox gateway = new FakeDeviceInbox();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final PressureGauge storage = new PressureGauge("test-storage", 2, 0);
  private final List<DeviceId> announced = new CopyOnWriteArrayList<>();
  private final List<MqttAsyncClient> clients = new ArrayList<>();
  private Device device;
  private SessionRegistry sessions;
  private MqttServer server;

  /** Wired as the composition root does: the registry first, then the server around it. */
  private int start(String... overrides) {
    device = registry.add(TOKEN);
    List<String> all = new ArrayList<>(List.of("worker-threads = 1"));
    all.addAll(List.of(overrides));
    MqttTransportConfig config = TestConfigs.mqtt(all.toArray(new String[0]));
    sessions = new SessionRegistry();
    server =
        new MqttServer(
            config,
            registry,
            gateway,
            new FakeDeadLetterStore(),
            PayloadParser.defaults(),
            List.of(storage),
            meters,
            sessions,
            announced::add,
            new LocalDeviceEvents(),
            new FakeTelemetryQueries());
    return server.start().getPort();
  }

  @AfterEach
  void stop() {
    for (MqttAsyncClient client : clients) {
      try {
        if (client.isConnected()) {
          client.disconnectForcibly(0, 1_000);
        }
        client.close(true);
      } catch (MqttException e) {
        // best effort: the server below is closed anyway
      }
    }
    if (server != null) {
      server.close();
    }
  }

  private MqttAsyncClient client(int port, String clientId) throws MqttException {
    MqttAsyncClient client =
        new MqttAsyncClient("tcp://127.0.0.1:" + port, clientId, new MemoryPersistence());
    clients.add(client);
    return client;
  }

  private static MqttConnectOptions options(String token) {
    MqttConnectOptions options = new MqttConnectOptions();
    options.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
    options.setUserName(token);
    options.setCleanSession(true);
    options.setAutomaticReconnect(false);
    options.setConnectionTimeout(5);
    options.setKeepAliveInterval(30);
    return options;
  }

  private MqttAsyncClient connect(int port, String clientId, String token) throws MqttException {
    MqttAsyncClient client = client(port, clientId);
    client.connect(options(token)).waitForCompletion(WAIT.toMillis());
    return client;
  }

  private double count(String name, String... tags) {
    Counter counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void should_complete_paho_publish_only_after_gateway_stores_the_message() throws Exception {
    int port = start();
    MqttAsyncClient client = connect(port, "dev-1", TOKEN);

    IMqttDeliveryToken delivery =
        client.publish(
            TELEMETRY, "{\"temperature\":21.5}".getBytes(StandardCharsets.UTF_8), 1, false);

    await().atMost(WAIT).until(() -> gateway.submissions().size() == 1);
    assertThat(gateway.submission(0).message()).isInstanceOf(DeviceMessage.PostTelemetry.class);
    assertThat(gateway.submission(0).message().size()).isEqualTo(1);
    await().during(SETTLE).atMost(SETTLE.multipliedBy(3)).until(() -> !delivery.isComplete());

    gateway.submission(0).store();

    await().atMost(WAIT).until(delivery::isComplete);
    assertThat(delivery.getException()).isNull();
    assertThat(client.isConnected()).isTrue();
  }

  @Test
  void should_close_paho_connection_without_puback_when_write_fails() throws Exception {
    int port = start();
    AtomicReference<Throwable> lost = new AtomicReference<>();
    MqttAsyncClient client = client(port, "dev-1");
    client.setCallback(callback(lost));
    client.connect(options(TOKEN)).waitForCompletion(WAIT.toMillis());

    IMqttDeliveryToken delivery =
        client.publish(TELEMETRY, "{\"t\":1}".getBytes(StandardCharsets.UTF_8), 1, false);
    await().atMost(WAIT).until(() -> gateway.submissions().size() == 1);
    gateway.submission(0).fail();

    await().atMost(WAIT).until(() -> lost.get() != null);
    assertThat(delivery.getException()).isNotNull();
    assertThat(count("fieldline.mqtt.write.failures")).isEqualTo(1);
  }

  @Test
  void should_refuse_with_reason_5_when_token_is_unknown() throws Exception {
    int port = start();
    MqttAsyncClient client = client(port, "dev-1");

    assertThatExceptionOfType(MqttException.class)
        .isThrownBy(() -> client.connect(options("wrong-token")).waitForCompletion(WAIT.toMillis()))
        .satisfies(
            e -> assertThat(e.getReasonCode()).isEqualTo(MqttException.REASON_CODE_NOT_AUTHORIZED));
    assertThat(count("fieldline.mqtt.connects", "result", "not_authorized")).isEqualTo(1);
  }

  @Test
  void should_disconnect_first_client_when_second_client_connects_with_same_token()
      throws Exception {
    int port = start();
    AtomicReference<Throwable> firstLost = new AtomicReference<>();
    MqttAsyncClient first = client(port, "dev-1-a");
    first.setCallback(callback(firstLost));
    first.connect(options(TOKEN)).waitForCompletion(WAIT.toMillis());

    MqttAsyncClient second = connect(port, "dev-1-b", TOKEN);

    await().atMost(WAIT).until(() -> firstLost.get() != null);
    assertThat(first.isConnected()).isFalse();
    await().during(SETTLE).atMost(SETTLE.multipliedBy(3)).until(second::isConnected);
    assertThat(server.sessions().activeSessions()).isEqualTo(1);
  }

  @Test
  void should_close_paho_connection_when_the_cluster_closes_the_session_through_the_registry()
      throws Exception {
    int port = start();
    SessionCloser cluster = sessions; // what the composition root hands to the cluster
    AtomicReference<Throwable> lost = new AtomicReference<>();
    MqttAsyncClient client = client(port, "dev-1");
    client.setCallback(callback(lost));
    client.connect(options(TOKEN)).waitForCompletion(WAIT.toMillis());
    assertThat(announced).as("the cluster heard of the session").containsExactly(device.id());

    assertThat(cluster.closeSession(device.id())).isTrue();

    await().atMost(WAIT).until(() -> lost.get() != null);
    await().atMost(WAIT).until(() -> sessions.activeSessions() == 0);
    assertThat(cluster.closeSession(device.id())).isFalse();
  }

  @Test
  void should_close_connection_beyond_max_connections_and_accept_again_when_one_leaves()
      throws Exception {
    registry.add("other-token");
    int port = start("max-connections = 1");
    MqttAsyncClient first = connect(port, "dev-1", TOKEN);
    MqttAsyncClient second = client(port, "dev-2");

    assertThatExceptionOfType(MqttException.class)
        .isThrownBy(
            () -> second.connect(options("other-token")).waitForCompletion(WAIT.toMillis()));
    assertThat(count("fieldline.mqtt.rejected", "reason", "connection_limit")).isEqualTo(1);
    assertThat(first.isConnected()).isTrue();

    first.disconnect().waitForCompletion(WAIT.toMillis());
    await().atMost(WAIT).until(() -> server.metrics().openConnections() == 0);
    MqttAsyncClient third = connect(port, "dev-3", "other-token");
    assertThat(third.isConnected()).isTrue();
  }

  @Test
  void should_stop_reading_sockets_while_storage_gauge_is_overloaded() throws Exception {
    int port = start();
    MqttAsyncClient client = connect(port, "dev-1", TOKEN);

    storage.increment();
    storage.increment();
    await()
        .atMost(WAIT)
        .until(() -> count("fieldline.mqtt.backpressure.pauses", "cause", "storage") == 1);
    client.publish(TELEMETRY, "{\"t\":1}".getBytes(StandardCharsets.UTF_8), 1, false);

    await()
        .during(SETTLE)
        .atMost(SETTLE.multipliedBy(3))
        .until(() -> gateway.submissions().isEmpty());

    storage.decrement();
    storage.decrement();
    await().atMost(WAIT).until(() -> gateway.submissions().size() == 1);
  }

  private static MqttCallback callback(AtomicReference<Throwable> lost) {
    return new MqttCallback() {
      @Override
      public void connectionLost(Throwable cause) {
        lost.set(cause == null ? new IllegalStateException("lost") : cause);
      }

      @Override
      public void messageArrived(String topic, MqttMessage message) {}

      @Override
      public void deliveryComplete(org.eclipse.paho.client.mqttv3.IMqttDeliveryToken token) {}
    };
  }
}
