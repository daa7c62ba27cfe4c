package io.fieldline.export.sink.kafka;

import io.fieldline.export.ExportRecord;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.Delivery;
import io.fieldline.export.sink.Sink;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers batches to one Kafka topic with the official producer: idempotent, {@code acks=all}, key
 * = the device id (a device stays in one partition, so its records keep their order), value = the
 * record's JSON. A batch is {@link Delivery.Delivered} when the broker acknowledged every record,
 * else {@link Delivery.Retry} with the first error; the stage never fails.
 *
 * <p>Records are sent in the batch's order and sending stops at the first one {@code send} refuses,
 * so a later record of a device is never sent past an earlier one that failed. A record that fails
 * after sending (it expired, the broker went away) can leave later ones of the same batch in the
 * topic before the Retry sends the whole batch again: consumers drop repeats by {@code seq}.
 *
 * <p>The producer is created by {@link #start} (so a sink is built without reaching Kafka), which
 * also asks for the topic's metadata, so that the first delivery finds the broker known and the
 * topic created (where the broker creates topics on demand). It is created again after it failed
 * for good (fenced, out of sequence, closed): the broken one is closed at the next delivery.
 *
 * <p>Threads: {@link #deliver} and {@link #close} from any thread, one delivery at a time (the
 * {@link Sink} contract). {@code deliver} blocks its caller at most {@code max.block.ms} (100 ms),
 * and only while a new producer fetches the topic's metadata. The returned stage completes on the
 * producer's I/O thread ({@code kafka-producer-network-thread | <client.id>}, the only thread this
 * sink has) or, past {@link Batching#timeout()}, on the JDK's {@code CompletableFuture} delay
 * thread: continue with the {@code *Async} methods.
 */
public final class KafkaSink implements Sink {

  private static final Logger LOG = LoggerFactory.getLogger(KafkaSink.class);

  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);

  private final KafkaSinkConfig config;
  private final String clientId;
  private final String logPrefix;
  private final Batching batching;
  private final Object lock = new Object();

  /** Guarded by {@link #lock}: the producer in use, null until the first delivery. */
  private @Nullable Producer<String, byte[]> producer;

  /** Guarded by {@link #lock}: a producer that failed for good, closed at the next delivery. */
  private @Nullable Producer<String, byte[]> broken;

  private boolean closed;

  /** The delivery in progress, completed with a Retry by {@link #close}. */
  private volatile @Nullable CompletableFuture<Delivery> current;

  KafkaSink(String clientId, String sinkName, KafkaSinkConfig config) {
    this.config = config;
    this.clientId = clientId;
    this.logPrefix = "[export|" + sinkName + "]";
    this.batching = config.batching();
  }

  /**
   * Creates the producer and asks for the topic's metadata on a short-lived thread: the request
   * waits at most {@code max.block.ms}, the producer goes on fetching after it.
   */
  @Override
  public void start() {
    Thread thread =
        new Thread(
            () -> {
              try {
                producer().partitionsFor(config.topic());
              } catch (KafkaException | IllegalStateException e) {
                LOG.debug("{} topic metadata not there yet: {}", logPrefix, e.toString());
              }
            },
            "fieldline-export-kafka-start");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public Batching batching() {
    return batching;
  }

  @Override
  public CompletionStage<Delivery> deliver(List<ExportRecord> batch) {
    if (batch.isEmpty()) {
      return CompletableFuture.completedFuture(Delivery.DELIVERED);
    }
    CompletableFuture<Delivery> result = new CompletableFuture<>();
    Producer<String, byte[]> sending;
    try {
      sending = producer();
    } catch (KafkaException e) {
      return CompletableFuture.completedFuture(
          new Delivery.Retry("cannot create the Kafka producer: " + e.getMessage()));
    } catch (IllegalStateException e) {
      return CompletableFuture.completedFuture(new Delivery.Retry("the sink was closed"));
    }
    current = result;
    Acks acks = new Acks(sending, batch.size(), result);
    for (ExportRecord record : batch) {
      try {
        sending.send(
            new ProducerRecord<>(config.topic(), record.deviceId().toString(), record.json()),
            acks);
      } catch (KafkaException | IllegalStateException e) {
        // Thrown (not passed to the callback) when the producer is closed or failed for good.
        acks.onCompletion(null, e);
      }
      if (result.isDone()) {
        break; // refused at send: nothing after it may go ahead of it
      }
    }
    return result.completeOnTimeout(
        new Delivery.Retry(
            "Kafka did not acknowledge the batch within " + batching.timeout().toMillis() + " ms"),
        batching.timeout().toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Closes the producer, waiting at most 2 s for records in flight; their delivery is a Retry. */
  @Override
  public void close() {
    Producer<String, byte[]> open;
    Producer<String, byte[]> failed;
    synchronized (lock) {
      closed = true;
      open = producer;
      failed = broken;
      producer = null;
      broken = null;
    }
    if (failed != null) {
      failed.close(Duration.ZERO);
    }
    if (open != null) {
      open.close(CLOSE_TIMEOUT);
    }
    CompletableFuture<Delivery> inProgress = current;
    if (inProgress != null) {
      inProgress.complete(new Delivery.Retry("the sink was closed"));
    }
  }

  /** The producer of the next delivery, closing a broken one and creating one if needed. */
  Producer<String, byte[]> producer() {
    Producer<String, byte[]> failed;
    Producer<String, byte[]> result;
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException("the sink was closed");
      }
      failed = broken;
      broken = null;
      if (producer == null) {
        producer = new KafkaProducer<>(config.producerConfig(clientId));
      }
      result = producer;
    }
    if (failed != null) {
      failed.close(Duration.ZERO);
    }
    return result;
  }

  /** Marks {@code failed} for closing and recreation, if it is still the one in use. */
  private void discard(Producer<String, byte[]> failed) {
    synchronized (lock) {
      if (producer == failed) {
        producer = null;
        broken = failed;
      }
    }
  }

  /** Errors after which a producer sends nothing more (idempotence state lost, or closed). */
  static boolean isFatal(Exception e) {
    return e instanceof ProducerFencedException
        || e instanceof OutOfOrderSequenceException
        || e instanceof InvalidProducerEpochException
        || e instanceof UnknownProducerIdException
        || e instanceof UnsupportedVersionException
        || e instanceof ClusterAuthorizationException
        || e instanceof AuthenticationException
        || e instanceof IllegalStateException
        // A producer in a fatal state refuses every send with a plain KafkaException.
        || (e instanceof KafkaException && !(e instanceof ApiException));
  }

  /** The Retry's text: what went wrong, in the operator's words where Kafka's are obscure. */
  String describe(Exception e, Producer<String, byte[]> producer) {
    String topic = config.topic();
    String message = String.valueOf(e.getMessage());
    boolean connected = connections(producer) > 0;
    if (e instanceof UnknownTopicOrPartitionException
        || (e instanceof TimeoutException && message.contains("not present in metadata"))) {
      return connected
          ? "topic '" + topic + "' does not exist"
          : "cannot reach Kafka at " + config.bootstrapServers() + " (" + message + ")";
    }
    if (e instanceof TopicAuthorizationException) {
      return "not authorized to write to topic '" + topic + "'";
    }
    if (!connected && (e instanceof RetriableException)) {
      return "cannot reach Kafka at " + config.bootstrapServers() + " (" + message + ")";
    }
    return e.getClass().getSimpleName() + ": " + message;
  }

  /** Open connections of the producer, from its {@code connection-count} metric. */
  private static double connections(Producer<String, byte[]> producer) {
    for (Map.Entry<MetricName, ? extends Metric> metric : producer.metrics().entrySet()) {
      MetricName name = metric.getKey();
      if (name.name().equals("connection-count") && name.group().equals("producer-metrics")) {
        Object value = metric.getValue().metricValue();
        return value instanceof Number number ? number.doubleValue() : 0;
      }
    }
    return 0;
  }

  /**
   * Counts one batch's acknowledgements: Delivered at the last one, Retry at the first error.
   * Called on the producer's I/O thread, or on the delivering thread for a refused send.
   */
  private final class Acks implements Callback {
    private final Producer<String, byte[]> sending;
    private final AtomicInteger remaining;
    private final CompletableFuture<Delivery> result;

    Acks(Producer<String, byte[]> sending, int size, CompletableFuture<Delivery> result) {
      this.sending = sending;
      this.remaining = new AtomicInteger(size);
      this.result = result;
    }

    @Override
    public void onCompletion(@Nullable RecordMetadata metadata, @Nullable Exception exception) {
      if (exception == null) {
        if (remaining.decrementAndGet() == 0) {
          result.complete(Delivery.DELIVERED);
        }
        return;
      }
      if (result.isDone()) {
        return; // one error per batch is enough
      }
      if (isFatal(exception)) {
        discard(sending);
      }
      String error = describe(exception, sending);
      if (result.complete(new Delivery.Retry(error))) {
        LOG.debug("{} delivery failed: {}", logPrefix, error);
      }
    }
  }
}
