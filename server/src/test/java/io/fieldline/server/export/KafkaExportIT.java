package io.fieldline.server.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.export.SinkAdmin;
import io.fieldline.export.SinkDraft;
import io.fieldline.export.SinkStatus;
import io.fieldline.export.SinkView;
import io.fieldline.kafka.embedded.EmbeddedKafka;
import io.fieldline.server.ServerTestBase;
import io.fieldline.server.cluster.DeviceFleet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The KAFKA sink end to end: devices publish over MQTT (HiveMQ client), the server exports to a
 * real Kafka broker (a child JVM, one for the class), and the official consumer reads the topic
 * back: every acknowledged message, keyed by device, in order per device — also across a broker
 * that is killed under load while ingestion goes on.
 */
class KafkaExportIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOPIC = "v1/devices/me/telemetry";

  private EmbeddedKafka kafka;

  @Override
  protected Map<String, Object> overrides() {
    // Back on the broker within a second of its return, and statuses stored every second.
    return Map.of(
        "fieldline.export.retry-max", "1 s",
        "fieldline.export.refresh-interval", "1 s");
  }

  @BeforeAll
  void startKafka() throws IOException {
    kafka =
        EmbeddedKafka.start(
            Files.createTempDirectory("fieldline-kafka-it-"),
            0,
            Map.of("auto.create.topics.enable", "false"));
  }

  @AfterAll
  void closeKafka() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @AfterEach
  void deleteSinks() {
    for (SinkView sink : admin().list().toCompletableFuture().join()) {
      admin().delete(sink.id()).toCompletableFuture().join();
    }
  }

  @Test
  void should_put_every_acknowledged_message_in_the_topic_in_order_per_device() throws Exception {
    createTopic("export-order", 4);
    createSink("kafka-order", "export-order");
    int devices = 10;
    int perDevice = 100;
    long base = 1_750_100_000_000L;
    Map<DeviceId, List<Integer>> acked = new ConcurrentHashMap<>();
    List<Mqtt3AsyncClient> clients = new ArrayList<>();
    List<CompletableFuture<?>> pubacks = new ArrayList<>();
    for (int d = 0; d < devices; d++) {
      Device device = createDevice("kafka-order-" + d, "kafka-order-token-" + d);
      List<Integer> deviceAcked = new CopyOnWriteArrayList<>();
      acked.put(device.id(), deviceAcked);
      Mqtt3AsyncClient client = asyncClient(device);
      clients.add(client);
      for (int i = 0; i < perDevice; i++) {
        int n = i;
        // The HiveMQ client sends them in this order; only those whose PUBACK arrived count.
        pubacks.add(
            client
                .publishWith()
                .topic(TOPIC)
                .qos(MqttQos.AT_LEAST_ONCE)
                .payload(telemetry(base + n, n))
                .send()
                .thenRun(() -> deviceAcked.add(n)));
      }
    }
    CompletableFuture.allOf(pubacks.toArray(CompletableFuture[]::new))
        .handle((done, error) -> null)
        .get(60, TimeUnit.SECONDS);
    clients.forEach(client -> client.disconnect().join());
    assertThat(acked.values().stream().mapToInt(List::size).sum())
        .as("a healthy server acknowledges every QoS 1 message")
        .isEqualTo(devices * perDevice);

    Map<String, Set<Integer>> expected = new HashMap<>();
    acked.forEach((device, values) -> expected.put(device.toString(), new HashSet<>(values)));
    List<ConsumerRecord<String, String>> read = consumeUntilPresent("export-order", expected);

    Map<String, Set<Integer>> partitions = new HashMap<>();
    for (ConsumerRecord<String, String> record : read) {
      JsonNode json = JSON.readTree(record.value());
      if (!expected.containsKey(record.key())) {
        continue; // the warm-up's device
      }
      partitions.computeIfAbsent(record.key(), k -> new HashSet<>()).add(record.partition());
      assertThat(json.get("deviceId").asText()).isEqualTo(record.key());
      assertThat(json.get("kind").asText()).isEqualTo("TELEMETRY");
      assertThat(json.get("deviceName").asText()).startsWith("kafka-order-");
      assertThat(json.get("deviceType").asText()).isEqualTo("test");
      assertThat(json.get("ts").asLong()).isEqualTo(base + json.at("/values/n").asInt());
    }
    assertThat(partitions.values()).allSatisfy(p -> assertThat(p).hasSize(1));
    // Per device, after dropping what a consumer drops (seq not above the last seen): each value
    // once, in the order published.
    Map<String, List<Integer>> byDevice =
        afterDroppingRepeats(read, expected.keySet(), "/values/n");
    assertThat(byDevice).hasSize(devices);
    for (List<Integer> values : byDevice.values()) {
      assertThat(values).containsExactlyElementsOf(range(perDevice));
    }
  }

  @Test
  void should_keep_acknowledging_and_deliver_everything_in_order_when_kafka_is_killed_under_load()
      throws Exception {
    createTopic("export-outage", 4);
    SinkView sink = createSink("kafka-outage", "export-outage");
    long base = 1_750_200_000_000L;
    try (DeviceFleet fleet =
        new DeviceFleet(() -> List.of(mqttPort()), Duration.ofMillis(50))) { // ~20 msg/s each
      for (int d = 0; d < 10; d++) {
        Device device = createDevice("kafka-outage-" + d, "kafka-outage-token-" + d);
        fleet.add(device.id(), device.accessToken(), base, mqttPort());
      }
      fleet.start();
      await().atMost(Duration.ofSeconds(20)).until(() -> fleet.ackedCount() >= 300);

      kafka.kill();
      long ackedAtKill = fleet.ackedCount();
      try {
        await("the sink's status shows the outage")
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () -> {
                  SinkStatus status = status(sink);
                  assertThat(status.state().equals("RETRYING") || status.lagRecords() > 0)
                      .as("RETRYING or lagging: %s", status)
                      .isTrue();
                  assertThat(status.lastError()).as("%s", status).isNotNull();
                });
        // Ingestion does not wait for a sink: PUBACKs keep coming while Kafka is gone.
        await().atMost(Duration.ofSeconds(20)).until(() -> fleet.ackedCount() >= ackedAtKill + 300);
      } finally {
        kafka.restart();
      }
      long ackedAtRestart = fleet.ackedCount();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> fleet.ackedCount() >= ackedAtRestart + 200);
      fleet.stop();
      await().atMost(Duration.ofSeconds(30)).until(fleet::drained);
      assertThat(fleet.reconnects()).as("no device lost its connection").isZero();

      Map<String, Set<Integer>> expected = new HashMap<>();
      for (DeviceFleet.Device device : fleet.devices()) {
        Set<Integer> values = new HashSet<>();
        device.acked().forEach(ts -> values.add((int) (ts - base)));
        expected.put(device.id.toString(), values);
      }
      List<ConsumerRecord<String, String>> read = consumeUntilPresent("export-outage", expected);

      Map<String, List<Integer>> byDevice =
          afterDroppingRepeats(read, expected.keySet(), "/values/seq");
      for (DeviceFleet.Device device : fleet.devices()) {
        // Nothing was retransmitted (no reconnect), so each acknowledged message once, in order.
        assertThat(byDevice.get(device.id.toString()))
            .as("device %s", device.id)
            .containsExactlyElementsOf(
                device.acked().stream().sorted().map(ts -> (int) (ts - base)).toList());
      }
      await("the sink's status recovers")
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                SinkStatus status = status(sink);
                assertThat(status.state()).isEqualTo("RUNNING");
                assertThat(status.lagRecords()).isZero();
                assertThat(status.delivered()).isGreaterThanOrEqualTo(fleet.ackedCount());
              });
    }
  }

  /**
   * Per device (record key) in offset order, the values at {@code pointer} of the records a
   * consumer keeps: those whose {@code seq} is above the highest it has seen.
   */
  private static Map<String, List<Integer>> afterDroppingRepeats(
      List<ConsumerRecord<String, String>> read, Set<String> devices, String pointer)
      throws IOException {
    Map<String, List<Integer>> byDevice = new LinkedHashMap<>();
    Map<String, Long> lastSeq = new HashMap<>();
    for (ConsumerRecord<String, String> record : read) {
      if (!devices.contains(record.key())) {
        continue;
      }
      JsonNode json = JSON.readTree(record.value());
      long seq = json.get("seq").asLong();
      if (seq <= lastSeq.getOrDefault(record.key(), Long.MIN_VALUE)) {
        continue;
      }
      lastSeq.put(record.key(), seq);
      byDevice.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(json.at(pointer).asInt());
    }
    return byDevice;
  }

  /**
   * Reads the topic from the start with the official consumer until every expected value of every
   * device (record key → values of {@code n} or {@code seq}) arrived; returns what was read, each
   * partition in offset order (a device's records are all in one partition).
   */
  private List<ConsumerRecord<String, String>> consumeUntilPresent(
      String topic, Map<String, Set<Integer>> expected) {
    Map<String, Object> config =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    Map<String, Set<Integer>> missing = new HashMap<>();
    expected.forEach((device, values) -> missing.put(device, new HashSet<>(values)));
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(10))) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      await("every acknowledged message in topic " + topic)
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(10))
          .until(
              () -> {
                for (ConsumerRecord<String, String> record :
                    consumer.poll(Duration.ofMillis(200))) {
                  records.add(record);
                  Set<Integer> left = missing.get(record.key());
                  if (left != null) {
                    JsonNode json = JSON.readTree(record.value());
                    JsonNode values = json.get("values");
                    left.remove((values.has("n") ? values.get("n") : values.get("seq")).asInt());
                  }
                }
                missing.values().removeIf(Set::isEmpty);
                return missing.isEmpty();
              });
    }
    return records;
  }

  private void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin
          .createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
  }

  private SinkView createSink(String name, String topic) {
    ObjectNode configuration = JSON.createObjectNode();
    configuration.put("bootstrapServers", kafka.bootstrapServers());
    configuration.put("topic", topic);
    configuration.put("lingerMs", 5);
    configuration.put("batchSize", 100);
    // The shortest the sink allows: a batch the dead broker never answers is retried after 2 s.
    configuration.put("deliveryTimeoutMs", 2_000);
    return admin()
        .create(new SinkDraft(name, "KAFKA", JSON.createObjectNode(), configuration))
        .toCompletableFuture()
        .join();
  }

  private SinkStatus status(SinkView sink) {
    return admin().get(sink.id()).toCompletableFuture().join().orElseThrow().status();
  }

  private Mqtt3AsyncClient asyncClient(Device device) {
    Mqtt3AsyncClient client =
        Mqtt3Client.builder()
            .identifier("it-" + device.name())
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .buildAsync();
    client
        .connectWith()
        .simpleAuth()
        .username(device.accessToken())
        .applySimpleAuth()
        .send()
        .orTimeout(10, TimeUnit.SECONDS)
        .join();
    return client;
  }

  private static byte[] telemetry(long ts, int n) {
    return ("{\"ts\":" + ts + ",\"values\":{\"n\":" + n + "}}").getBytes(StandardCharsets.UTF_8);
  }

  private SinkAdmin admin() {
    return server.sinkAdmin().orElseThrow();
  }

  private static List<Integer> range(int n) {
    List<Integer> values = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      values.add(i);
    }
    return values;
  }
}
