import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Counts the records of one Kafka topic by reading all of them (bench/run.sh EXPORT=kafka and
 * kafka-outage): a plain consumer without a group, every partition assigned, read from the
 * beginning up to the end offsets taken at the start. Only counts; the records are not parsed.
 *
 * <p>Run as a single-file program on the broker's own classpath (kafka-clients 4.4 is on it; the
 * broker's kafka-tools, with the console consumer, is not):
 *
 * <pre>
 * java -cp "$(cat kafka-embedded/runtime/target/kafka.classpath)" bench/kafka/CountRecords.java \
 *     127.0.0.1:PORT TOPIC [timeoutSeconds]
 * </pre>
 *
 * Prints one line {@code records=N partitions=P endOffsets=E} (E: the sum of the end offsets, the
 * same as N for a topic that was never compacted or truncated and saw no transactions); exits 1
 * when the topic does not exist or the end was not reached in time.
 */
public final class CountRecords {

  private CountRecords() {}

  public static void main(String[] args) {
    if (args.length < 2) {
      System.err.println("usage: CountRecords BOOTSTRAP TOPIC [timeoutSeconds]");
      System.exit(2);
    }
    String topic = args[1];
    long deadline = System.nanoTime() + Duration.ofSeconds(args.length > 2 ? Long.parseLong(args[2]) : 120).toNanos();
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    config.put(ConsumerConfig.CLIENT_ID_CONFIG, "fieldline-bench-count");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
      if (infos == null || infos.isEmpty()) {
        System.err.println("CountRecords: topic " + topic + " not found");
        System.exit(1);
      }
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : infos) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      long endSum = end.values().stream().mapToLong(Long::longValue).sum();
      long records = 0;
      while (!reached(consumer, end)) {
        if (System.nanoTime() - deadline > 0) {
          System.out.println(
              "records=" + records + " partitions=" + partitions.size() + " endOffsets=" + endSum + " timeout=true");
          System.exit(1);
        }
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
        records += batch.count();
      }
      System.out.println("records=" + records + " partitions=" + partitions.size() + " endOffsets=" + endSum);
    }
  }

  private static boolean reached(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
    for (Map.Entry<TopicPartition, Long> partition : end.entrySet()) {
      if (consumer.position(partition.getKey()) < partition.getValue()) {
        return false;
      }
    }
    return true;
  }
}
