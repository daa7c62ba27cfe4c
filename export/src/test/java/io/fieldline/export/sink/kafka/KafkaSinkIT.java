package io.fieldline.export.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.export.ExportRecord;
import io.fieldline.export.sink.Delivery;
import io.fieldline.export.sink.Sink;
import io.fieldline.kafka.embedded.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The KAFKA sink against a real broker (one per class), read back with the official consumer. */
class KafkaSinkIT {

  @TempDir static Path dir;

  private static EmbeddedKafka kafka;

  private final KafkaSinkFactory factory = new KafkaSinkFactory();

  @BeforeAll
  static void startBroker() {
    kafka = EmbeddedKafka.start(dir, 0, Map.of("auto.create.topics.enable", "false"));
  }

  @AfterAll
  static void closeBroker() {
    kafka.close();
  }

  private static void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin
          .createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
  }

  private KafkaSink sink(String topic, int deliveryTimeoutMs) throws Exception {
    ObjectNode configuration =
        JsonNodeFactory.instance
            .objectNode()
            .put("bootstrapServers", kafka.bootstrapServers())
            .put("topic", topic)
            .put("deliveryTimeoutMs", deliveryTimeoutMs);
    Sink sink =
        factory.create(UUID.randomUUID(), "it-" + topic, factory.validate(configuration, null));
    return (KafkaSink) sink;
  }

  private static ExportRecord record(DeviceId device, long seq) {
    String json = "{\"deviceId\":\"" + device + "\",\"seq\":" + seq + "}";
    return new ExportRecord(device, seq, 0, json.getBytes(StandardCharsets.UTF_8));
  }

  private static Delivery deliver(Sink sink, List<ExportRecord> batch) throws Exception {
    return sink.deliver(batch)
        .toCompletableFuture()
        .get(sink.batching().timeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
  }

  /** As the exporter does: the same batch again until it is delivered. */
  private static void deliverUntilDelivered(Sink sink, List<ExportRecord> batch) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> deliver(sink, batch), Delivery.Delivered.class::isInstance);
  }

  /** Every record of {@code topic}, per partition in offset order, once {@code count} arrived. */
  private static List<ConsumerRecord<String, String>> consume(String topic, int count) {
    Map<String, Object> config =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(10))) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                return records.size() >= count;
              });
    }
    return records;
  }

  @Test
  void should_deliver_every_record_in_device_order_when_batches_come_from_several_devices()
      throws Exception {
    createTopic("telemetry", 3);
    List<DeviceId> devices = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      devices.add(DeviceId.random());
    }
    List<ExportRecord> records = new ArrayList<>();
    Map<DeviceId, Long> nextSeq = new HashMap<>();
    for (int i = 0; i < 1_000; i++) {
      DeviceId device = devices.get((i * 31 + i / 7) % devices.size());
      records.add(record(device, nextSeq.merge(device, 1L, Long::sum)));
    }

    try (KafkaSink sink = sink("telemetry", 30_000)) {
      for (int from = 0; from < records.size(); from += 120) {
        deliverUntilDelivered(sink, records.subList(from, Math.min(from + 120, records.size())));
      }
    }

    List<ConsumerRecord<String, String>> read = consume("telemetry", 1_000);
    assertThat(read).hasSize(1_000);
    Map<String, List<String>> valuesByKey = new HashMap<>();
    Map<String, Set<Integer>> partitionsByKey = new HashMap<>();
    for (ConsumerRecord<String, String> consumed : read) {
      valuesByKey.computeIfAbsent(consumed.key(), k -> new ArrayList<>()).add(consumed.value());
      partitionsByKey
          .computeIfAbsent(consumed.key(), k -> new HashSet<>())
          .add(consumed.partition());
    }
    Map<String, List<String>> expected =
        records.stream()
            .collect(
                Collectors.groupingBy(
                    r -> r.deviceId().toString(),
                    Collectors.mapping(
                        r -> new String(r.json(), StandardCharsets.UTF_8), Collectors.toList())));
    assertThat(valuesByKey).isEqualTo(expected);
    assertThat(partitionsByKey.values()).allSatisfy(p -> assertThat(p).hasSize(1));
    assertThat(partitionsByKey.values().stream().flatMap(Set::stream).distinct().count())
        .as("7 devices spread over the 3 partitions")
        .isGreaterThan(1);
  }

  @Test
  void should_answer_retry_naming_the_topic_when_it_does_not_exist() throws Exception {
    List<ExportRecord> batch = List.of(record(DeviceId.random(), 1));
    List<Delivery> answers = new ArrayList<>();

    try (KafkaSink sink = sink("missing", 5_000)) {
      // A new producer may still be connecting at its first answer: the exporter asks again.
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                answers.add(deliver(sink, batch));
                assertThat(answers.get(answers.size() - 1))
                    .isEqualTo(new Delivery.Retry("topic 'missing' does not exist"));
              });
    }

    assertThat(answers).allSatisfy(answer -> assertThat(answer).isInstanceOf(Delivery.Retry.class));
  }

  @Test
  void should_answer_retry_in_time_and_deliver_again_when_the_broker_stops_and_restarts()
      throws Exception {
    createTopic("outage", 1);
    DeviceId device = DeviceId.random();
    try (KafkaSink sink = sink("outage", 2_000)) {
      deliverUntilDelivered(sink, List.of(record(device, 1)));
      try {
        kafka.stop();
        long start = System.nanoTime();

        Delivery during = deliver(sink, List.of(record(device, 2), record(device, 3)));

        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(during).isInstanceOf(Delivery.Retry.class);
        assertThat(((Delivery.Retry) during).error())
            .containsAnyOf("cannot reach Kafka at " + kafka.bootstrapServers(), "Expiring");
        assertThat(millis).isLessThanOrEqualTo(sink.batching().timeout().toMillis());
      } finally {
        kafka.restart();
      }

      deliverUntilDelivered(sink, List.of(record(device, 2), record(device, 3)));
    }

    List<String> values = consume("outage", 3).stream().map(ConsumerRecord::value).toList();
    assertThat(values)
        .containsExactly(
            new String(record(device, 1).json(), StandardCharsets.UTF_8),
            new String(record(device, 2).json(), StandardCharsets.UTF_8),
            new String(record(device, 3).json(), StandardCharsets.UTF_8));
  }

  @Test
  void should_recreate_the_producer_when_it_failed_for_good() throws Exception {
    createTopic("recreate", 1);
    DeviceId device = DeviceId.random();
    KafkaSink sink = sink("recreate", 5_000);
    try {
      deliverUntilDelivered(sink, List.of(record(device, 1)));
      Producer<String, byte[]> first = sink.producer();
      first.close(Duration.ZERO);

      Delivery refused = deliver(sink, List.of(record(device, 2)));

      assertThat(refused).isInstanceOf(Delivery.Retry.class);
      deliverUntilDelivered(sink, List.of(record(device, 2)));
      assertThat(sink.producer()).isNotSameAs(first);

      sink.close();

      assertThat(deliver(sink, List.of(record(device, 3))))
          .isEqualTo(new Delivery.Retry("the sink was closed"));
    } finally {
      sink.close();
    }

    assertThat(consume("recreate", 2)).hasSize(2);
  }
}
