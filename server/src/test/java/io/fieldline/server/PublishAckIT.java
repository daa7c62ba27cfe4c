package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.cql.Row;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import io.fieldline.common.device.Device;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.Test;

/** The core promise, end to end with real clients and a real Cassandra: PUBACK means stored. */
class PublishAckIT extends ServerTestBase {

  @Test
  void should_make_every_row_readable_before_its_puback_arrives() {
    Device device = createDevice("ack-after-write", "ack-after-write-token");
    Mqtt3BlockingClient client = hivemq("ack-after-write");
    client.connectWith().simpleAuth().username("ack-after-write-token").applySimpleAuth().send();
    long base = 1_700_000_000_000L;
    for (int i = 0; i < 50; i++) {
      String payload = "{\"ts\":" + (base + i) + ",\"values\":{\"n\":" + i + ",\"t\":21.5}}";
      // The blocking QoS 1 publish returns when the PUBACK has arrived.
      client
          .publishWith()
          .topic("v1/devices/me/telemetry")
          .qos(MqttQos.AT_LEAST_ONCE)
          .payload(payload.getBytes(StandardCharsets.UTF_8))
          .send();
      Row row =
          cql.execute(
                  "SELECT long_v FROM ts_kv WHERE device_id = ? AND key = 'n' AND ts = ?"
                      + " ALLOW FILTERING",
                  device.id().value(),
                  base + i)
              .one();
      assertThat(row).as("row %d readable when its PUBACK arrived", i).isNotNull();
      assertThat(row.getLong(0)).isEqualTo(i);
    }
    client.disconnect();
    assertThat(rows(device)).isEqualTo(100);
  }

  @Test
  void should_store_exactly_1000_rows_and_ack_in_order_when_100_devices_publish_concurrently()
      throws Exception {
    int devices = 100;
    int perDevice = 10;
    List<Device> created = new ArrayList<>();
    List<MqttAsyncClient> clients = new ArrayList<>();
    CountDownLatch acked = new CountDownLatch(devices * perDevice);
    ConcurrentHashMap<Integer, List<Integer>> ackOrder = new ConcurrentHashMap<>();
    ConcurrentHashMap<Integer, List<Integer>> sendOrder = new ConcurrentHashMap<>();
    for (int d = 0; d < devices; d++) {
      created.add(createDevice("fleet-" + d, "fleet-token-" + d));
      MqttAsyncClient client =
          new MqttAsyncClient(
              "tcp://127.0.0.1:" + mqttPort(), "fleet-" + d, new MemoryPersistence());
      int index = d;
      List<Integer> acks = Collections.synchronizedList(new ArrayList<>());
      ackOrder.put(index, acks);
      client.setCallback(
          new MqttCallback() {
            @Override
            public void connectionLost(Throwable cause) {}

            @Override
            public void messageArrived(String topic, MqttMessage message) {}

            @Override
            public void deliveryComplete(IMqttDeliveryToken token) {
              // Paho calls this as each PUBACK arrives, in wire order.
              acks.add(token.getMessageId());
              acked.countDown();
            }
          });
      MqttConnectOptions options = new MqttConnectOptions();
      options.setUserName("fleet-token-" + d);
      options.setMaxInflight(perDevice);
      client.connect(options).waitForCompletion(10_000);
      clients.add(client);
    }
    long base = 1_700_100_000_000L;
    for (int m = 0; m < perDevice; m++) {
      for (int d = 0; d < devices; d++) {
        String payload = "{\"ts\":" + (base + m) + ",\"values\":{\"v\":" + m + "}}";
        IMqttDeliveryToken token =
            clients
                .get(d)
                .publish(
                    "v1/devices/me/telemetry", payload.getBytes(StandardCharsets.UTF_8), 1, false);
        sendOrder
            .computeIfAbsent(d, k -> Collections.synchronizedList(new ArrayList<>()))
            .add(token.getMessageId());
      }
    }
    assertThat(acked.await(60, TimeUnit.SECONDS)).as("all PUBACKs received").isTrue();
    for (int d = 0; d < devices; d++) {
      assertThat(ackOrder.get(d)).as("PUBACK order of device %d", d).isEqualTo(sendOrder.get(d));
    }
    long total = 0;
    for (Device device : created) {
      total += rows(device);
    }
    assertThat(total).isEqualTo((long) devices * perDevice);
    for (MqttAsyncClient client : clients) {
      client.disconnect().waitForCompletion(5_000);
      client.close();
    }
  }

  private Mqtt3BlockingClient hivemq(String clientId) {
    return Mqtt3Client.builder()
        .identifier(clientId)
        .serverHost("127.0.0.1")
        .serverPort(mqttPort())
        .buildBlocking();
  }
}
