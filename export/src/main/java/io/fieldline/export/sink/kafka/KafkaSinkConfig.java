package io.fieldline.export.sink.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.InvalidSinkException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.jspecify.annotations.Nullable;

/**
 * A Kafka sink's settings, read from its stored configuration. {@link #validate} turns what a
 * caller sent into the stored form; {@link #from} reads the stored form back; {@link
 * #producerConfig} is what the producer is built with. Immutable.
 *
 * @param bootstrapServers {@code host:port[,host:port…]}, as the producer's {@code
 *     bootstrap.servers}
 * @param topic where every record goes
 * @param properties producer settings passed through (TLS, SASL, tuning), secrets included
 * @param batchSize most records per delivery
 * @param lingerMs how long a batch that is not full waits for more records in the exporter (the
 *     producer's {@code linger.ms} is the smaller of it and 5 ms)
 * @param deliveryTimeoutMs the producer's {@code delivery.timeout.ms}: how long a record may take
 *     from send to acknowledgement before the delivery is retried
 */
record KafkaSinkConfig(
    String bootstrapServers,
    String topic,
    Map<String, String> properties,
    int batchSize,
    int lingerMs,
    int deliveryTimeoutMs) {

  static final String BOOTSTRAP_SERVERS = "bootstrapServers";
  static final String TOPIC = "topic";
  static final String PROPERTIES = "properties";
  static final String BATCH_SIZE = "batchSize";
  static final String LINGER_MS = "lingerMs";
  static final String DELIVERY_TIMEOUT_MS = "deliveryTimeoutMs";

  private static final List<String> FIELDS =
      List.of(BOOTSTRAP_SERVERS, TOPIC, PROPERTIES, BATCH_SIZE, LINGER_MS, DELIVERY_TIMEOUT_MS);

  /**
   * The producer's memory for records not yet acknowledged. A delivery's batch ({@link
   * #MAX_BATCH_BYTES}) always fits, so {@code send} never waits for memory.
   */
  static final long BUFFER_MEMORY = 8L << 20;

  static final int MAX_BATCH_BYTES = 4 << 20;

  /**
   * The longest {@code send} may block the caller: once per (re)created producer while it fetches
   * the topic's metadata. Longer fails that delivery with a Retry; the fetch goes on meanwhile.
   */
  static final int MAX_BLOCK_MS = 100;

  /** How much longer than {@code deliveryTimeoutMs} the exporter waits for a delivery. */
  static final Duration TIMEOUT_MARGIN = Duration.ofSeconds(2);

  /**
   * Producer settings the sink owns, refused in {@code properties}: ordering and at-least-once
   * (idempotence, acks, retries, partitioning by device, no transactions), never blocking the
   * caller (buffer and block time), and those set from the fields above.
   */
  static final Set<String> PINNED =
      Set.of(
          ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
          ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
          ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
          ProducerConfig.ACKS_CONFIG,
          ProducerConfig.RETRIES_CONFIG,
          ProducerConfig.TRANSACTIONAL_ID_CONFIG,
          ProducerConfig.PARTITIONER_CLASS_CONFIG,
          ProducerConfig.PARTITIONER_IGNORE_KEYS_CONFIG,
          ProducerConfig.LINGER_MS_CONFIG,
          ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
          ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
          ProducerConfig.MAX_BLOCK_MS_CONFIG,
          ProducerConfig.BUFFER_MEMORY_CONFIG);

  /**
   * The default {@code batchSize}: 2,000 records. A sink has one delivery in flight, so a sink that
   * is behind delivers at most one batch per round trip to the broker: with a broker 20 ms away,
   * 500 records would cap it at 25,000 records/s, 2,000 at 100,000. At lower rates {@code lingerMs}
   * decides the batch (about 50 records at 1,000/s), so the size only matters when there is a
   * backlog; 2,000 records of ~250 bytes are half a megabyte of heap per sink.
   */
  static final int DEFAULT_BATCH_SIZE = 2_000;

  /**
   * The default {@code lingerMs}: 50 ms. At 1,000 records/s it makes batches of about 50 records
   * instead of a handful, which is what the CPU per record depends on (producer thread, broker
   * requests); the latency it adds is well inside what a pipeline fed by a store expects.
   */
  static final int DEFAULT_LINGER_MS = 50;

  /**
   * The producer's own {@code linger.ms}: at most 5 ms. The exporter hands it whole batches
   * already; the producer only needs to gather the records of one batch into one request.
   */
  static final int PRODUCER_LINGER_MS = 5;

  /** Idempotence keeps order with at most 5 requests in flight per connection. */
  static final int MAX_IN_FLIGHT = 5;

  /**
   * The default requests in flight per connection: 1. With 5, kafka-clients 4.4 stalled a partition
   * until the delivery timeout when the first request to a new leader was answered
   * NOT_LEADER_OR_FOLLOWER while a later one was in flight (every retry of the later one answered
   * OUT_OF_ORDER_SEQUENCE_NUMBER): 3 of 6 fresh topics without compression, then a Retry after 30
   * s. With 1 it never happened, and 20,000 records of 230 bytes in batches of 500 went as fast
   * (0.45–1.1 s either way, against the embedded broker). Up to 5 can be set in properties.
   */
  static final int DEFAULT_IN_FLIGHT = 1;

  private static final ConfigDef PRODUCER_CONFIG = ProducerConfig.configDef();

  KafkaSinkConfig {
    properties = Map.copyOf(properties);
  }

  /** The exporter's batching for this sink. */
  Batching batching() {
    return new Batching(
        batchSize,
        MAX_BATCH_BYTES,
        Duration.ofMillis(lingerMs),
        Duration.ofMillis(deliveryTimeoutMs).plus(TIMEOUT_MARGIN));
  }

  /**
   * The producer's configuration: ours, then {@code properties}. Idempotent with {@code acks=all},
   * keys are device ids (so a device stays in one partition), values the records' JSON. LZ4 by
   * default: the JSON records above took 3.7 times less log space (1.48 MB against 5.57 MB) at the
   * same or better speed; zstd took 6.5 times less and 20–30 % more time.
   */
  Map<String, Object> producerConfig(String clientId) {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
    config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    config.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, DEFAULT_IN_FLIGHT);
    config.putAll(properties);
    config.putAll(pinned(bootstrapServers, lingerMs, deliveryTimeoutMs));
    return config;
  }

  private static Map<String, Object> pinned(
      String bootstrapServers, int lingerMs, int deliveryTimeoutMs) {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    int producerLinger = Math.min(lingerMs, PRODUCER_LINGER_MS);
    config.put(ProducerConfig.LINGER_MS_CONFIG, producerLinger);
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, deliveryTimeoutMs);
    // The producer requires delivery.timeout.ms >= linger.ms + request.timeout.ms.
    config.put(
        ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
        Math.min(30_000, deliveryTimeoutMs - producerLinger));
    config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, MAX_BLOCK_MS);
    config.put(ProducerConfig.BUFFER_MEMORY_CONFIG, BUFFER_MEMORY);
    return config;
  }

  /**
   * Whether a producer property holds a secret: Kafka declares it a password ({@code
   * ssl.key.password}, {@code sasl.jaas.config}, …), or its name says so.
   */
  static boolean isSecret(String property) {
    ConfigDef.ConfigKey key = PRODUCER_CONFIG.configKeys().get(property);
    return (key != null && key.type == ConfigDef.Type.PASSWORD)
        || property.toLowerCase(Locale.ROOT).contains("password")
        || property.equals("sasl.jaas.config");
  }

  /** Every secret producer property, as {@code properties.<name>}. */
  static Set<String> secretFields() {
    Set<String> fields = new TreeSet<>();
    for (String name : ProducerConfig.configNames()) {
      if (isSecret(name)) {
        fields.add(PROPERTIES + "." + name);
      }
    }
    return fields;
  }

  /**
   * Checks a configuration and returns its stored form: every field present, defaults filled in.
   * Lists every problem found, separated by {@code "; "}; never quotes a secret's value.
   *
   * @param previous the stored configuration when updating: a secret property left out (or null)
   *     keeps its value
   */
  static ObjectNode validate(ObjectNode given, @Nullable ObjectNode previous)
      throws InvalidSinkException {
    List<String> errors = new ArrayList<>();
    for (Iterator<String> names = given.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        errors.add("unknown field '" + name + "' (known: " + String.join(", ", FIELDS) + ")");
      }
    }
    String bootstrapServers = checkBootstrapServers(given.get(BOOTSTRAP_SERVERS), errors);
    String topic = checkTopic(given.get(TOPIC), errors);
    Map<String, String> properties =
        checkProperties(
            given.get(PROPERTIES), previous == null ? null : previous.get(PROPERTIES), errors);
    int batchSize = integer(given, BATCH_SIZE, DEFAULT_BATCH_SIZE, 1, 10_000, errors);
    int lingerMs = integer(given, LINGER_MS, DEFAULT_LINGER_MS, 0, 1_000, errors);
    int deliveryTimeoutMs = integer(given, DELIVERY_TIMEOUT_MS, 30_000, 2_000, 300_000, errors);
    if (errors.isEmpty()) {
      checkWithKafka(properties, bootstrapServers, lingerMs, deliveryTimeoutMs, errors);
    }
    if (!errors.isEmpty()) {
      throw new InvalidSinkException("invalid kafka configuration: " + String.join("; ", errors));
    }
    ObjectNode stored = JsonNodeFactory.instance.objectNode();
    stored.put(BOOTSTRAP_SERVERS, bootstrapServers);
    stored.put(TOPIC, topic);
    ObjectNode propertiesNode = stored.putObject(PROPERTIES);
    properties.forEach(propertiesNode::put);
    stored.put(BATCH_SIZE, batchSize);
    stored.put(LINGER_MS, lingerMs);
    stored.put(DELIVERY_TIMEOUT_MS, deliveryTimeoutMs);
    return stored;
  }

  /**
   * Reads a stored configuration (one {@link #validate} returned).
   *
   * @throws IllegalArgumentException if it is not one
   */
  static KafkaSinkConfig from(ObjectNode stored) {
    String bootstrapServers = stored.path(BOOTSTRAP_SERVERS).asText();
    String topic = stored.path(TOPIC).asText();
    if (bootstrapServers.isEmpty() || topic.isEmpty()) {
      throw new IllegalArgumentException(
          "not a stored kafka configuration: bootstrapServers or topic empty");
    }
    Map<String, String> properties = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> property : stored.path(PROPERTIES).properties()) {
      properties.put(property.getKey(), property.getValue().asText());
    }
    return new KafkaSinkConfig(
        bootstrapServers,
        topic,
        properties,
        stored.path(BATCH_SIZE).asInt(DEFAULT_BATCH_SIZE),
        stored.path(LINGER_MS).asInt(5),
        stored.path(DELIVERY_TIMEOUT_MS).asInt(30_000));
  }

  private static String checkBootstrapServers(@Nullable JsonNode node, List<String> errors) {
    if (node == null || node.isNull()) {
      errors.add("bootstrapServers is required");
      return "";
    }
    if (!node.isTextual()) {
      errors.add("bootstrapServers must be a string of host:port, comma-separated");
      return "";
    }
    List<String> servers = new ArrayList<>();
    for (String part : node.asText().split(",", -1)) {
      String server = part.strip();
      String host = Utils.getHost(server);
      Integer port = Utils.getPort(server);
      if (host == null || host.isEmpty() || port == null || port < 1 || port > 65_535) {
        errors.add(
            "bootstrapServers: '" + server + "' is not host:port (comma-separated, port 1..65535)");
        return "";
      }
      servers.add(server);
    }
    return String.join(",", servers);
  }

  private static String checkTopic(@Nullable JsonNode node, List<String> errors) {
    if (node == null || node.isNull()) {
      errors.add("topic is required");
      return "";
    }
    if (!node.isTextual()) {
      errors.add("topic must be a string");
      return "";
    }
    String topic = node.asText();
    try {
      Topic.validate(topic);
    } catch (InvalidTopicException e) {
      errors.add("topic: " + e.getMessage());
      return "";
    }
    if (Topic.isInternal(topic)) {
      errors.add("topic: '" + topic + "' is one of Kafka's internal topics");
      return "";
    }
    return topic;
  }

  private static Map<String, String> checkProperties(
      @Nullable JsonNode node, @Nullable JsonNode previous, List<String> errors) {
    Map<String, String> properties = new LinkedHashMap<>();
    if (node != null && !node.isNull() && !node.isObject()) {
      errors.add("properties must be an object of string values");
      return properties;
    }
    if (node != null && node.isObject()) {
      for (Map.Entry<String, JsonNode> entry : node.properties()) {
        String name = entry.getKey();
        JsonNode value = entry.getValue();
        if (PINNED.contains(name)) {
          errors.add("properties." + name + " is set by the sink and cannot be changed");
        } else if (!ProducerConfig.configNames().contains(name)) {
          errors.add("properties." + name + " is not a Kafka producer setting");
        } else if (value.isNull() && isSecret(name)) {
          continue; // keeps the previous value, below
        } else if (!value.isTextual()) {
          errors.add("properties." + name + " must be a string");
        } else if (name.equals(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION)
            && !inFlightAllowed(value.asText())) {
          errors.add(
              "properties." + name + " must be 1.." + MAX_IN_FLIGHT + " (ordering per device)");
        } else {
          properties.put(name, value.asText());
        }
      }
    }
    if (previous != null) {
      for (Map.Entry<String, JsonNode> entry : previous.properties()) {
        if (isSecret(entry.getKey()) && !properties.containsKey(entry.getKey())) {
          properties.put(entry.getKey(), entry.getValue().asText());
        }
      }
    }
    return properties;
  }

  private static boolean inFlightAllowed(String value) {
    try {
      int inFlight = Integer.parseInt(value.strip());
      return inFlight >= 1 && inFlight <= MAX_IN_FLIGHT;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** Kafka's own parsing of the producer settings: types, ranges and allowed values. */
  private static void checkWithKafka(
      Map<String, String> properties,
      String bootstrapServers,
      int lingerMs,
      int deliveryTimeoutMs,
      List<String> errors) {
    Map<String, Object> config = new HashMap<>(properties);
    config.putAll(pinned(bootstrapServers, lingerMs, deliveryTimeoutMs));
    try {
      PRODUCER_CONFIG.parse(config);
    } catch (ConfigException e) {
      String message = String.valueOf(e.getMessage());
      // Passwords parse from any string, but a message must never carry a secret.
      for (Map.Entry<String, String> property : properties.entrySet()) {
        if (isSecret(property.getKey()) && !property.getValue().isEmpty()) {
          message = message.replace(property.getValue(), "[hidden]");
        }
      }
      errors.add("properties: " + message);
    }
  }

  private static int integer(
      ObjectNode given, String field, int defaultValue, int min, int max, List<String> errors) {
    JsonNode node = given.get(field);
    if (node == null || node.isNull()) {
      return defaultValue;
    }
    if (!node.isIntegralNumber() || !node.canConvertToInt()) {
      errors.add(field + " must be an integer " + min + ".." + max);
      return defaultValue;
    }
    int value = node.intValue();
    if (value < min || value > max) {
      errors.add(field + " must be " + min + ".." + max + ", was " + value);
      return defaultValue;
    }
    return value;
  }
}
