package io.fieldline.export.sink.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.export.sink.InvalidSinkException;
import io.fieldline.export.sink.Sink;
import io.fieldline.export.sink.SinkFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The {@code KAFKA} sink type. Its configuration (a JSON object; unknown fields are refused):
 *
 * <ul>
 *   <li>{@code bootstrapServers} (required): {@code host:port}, comma-separated;
 *   <li>{@code topic} (required): a valid Kafka topic name, not an internal topic; it must exist
 *       unless the cluster creates topics on first use;
 *   <li>{@code properties} (default {} ): Kafka producer settings as strings, passed through: TLS
 *       ({@code security.protocol}, {@code ssl.*}), SASL ({@code sasl.*}), tuning ({@code
 *       compression.type}, default {@code lz4}; {@code max.in.flight.requests.per.connection},
 *       default 1, at most 5). Names that are not producer settings are refused, and so are those
 *       the sink owns ({@link KafkaSinkConfig#PINNED}: serializers, {@code enable.idempotence},
 *       {@code acks}, {@code retries}, partitioning, transactions, {@code linger.ms}, the timeouts,
 *       {@code buffer.memory}, {@code max.block.ms}). Secret properties (Kafka's password-typed
 *       ones such as {@code ssl.key.password} and {@code sasl.jaas.config}, and any name containing
 *       {@code password}) are write-only: left out of {@link #redacted}; an update without one (or
 *       with {@code null}) keeps the stored value;
 *   <li>{@code batchSize} (default 500, 1..10,000): most records per delivery;
 *   <li>{@code lingerMs} (default 5, 0..1,000): how long a batch that is not full waits, in the
 *       exporter and in the producer ({@code linger.ms});
 *   <li>{@code deliveryTimeoutMs} (default 30,000, 2,000..300,000): the producer's {@code
 *       delivery.timeout.ms}; a batch not acknowledged by then is retried.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class KafkaSinkFactory implements SinkFactory {

  /** The type name sinks of this kind are stored with. */
  public static final String TYPE = "KAFKA";

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public ObjectNode validate(ObjectNode configuration, @Nullable ObjectNode previous)
      throws InvalidSinkException {
    return KafkaSinkConfig.validate(configuration, previous);
  }

  @Override
  public ObjectNode redacted(ObjectNode stored) {
    ObjectNode shown = stored.deepCopy();
    JsonNode properties = shown.get(KafkaSinkConfig.PROPERTIES);
    if (properties instanceof ObjectNode object) {
      List<String> secrets = new ArrayList<>();
      object
          .fieldNames()
          .forEachRemaining(
              name -> {
                if (KafkaSinkConfig.isSecret(name)) {
                  secrets.add(name);
                }
              });
      object.remove(secrets);
    }
    return shown;
  }

  @Override
  public Set<String> secretFields() {
    return KafkaSinkConfig.secretFields();
  }

  /**
   * A sink whose producer (client id {@code fieldline-export-<sinkId>}) starts at its first use.
   */
  @Override
  public Sink create(UUID sinkId, String sinkName, ObjectNode stored) {
    return new KafkaSink("fieldline-export-" + sinkId, sinkName, KafkaSinkConfig.from(stored));
  }
}
