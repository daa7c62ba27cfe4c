package io.fieldline.server;

import com.typesafe.config.Config;
import io.fieldline.actors.LocalDeviceInbox;
import io.fieldline.common.DeviceId;
import io.fieldline.common.config.ConfigReader;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.transport.common.payload.PayloadParser;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the message path before the MQTT listener opens — payload parsing, the device actors, the
 * store, the Cassandra driver and Cassandra's own write path — so that the first devices after a
 * start meet compiled code and warm caches instead of the interpreter and a JIT compiler competing
 * with them for the cores (docs/performance.md: the first seconds after a start held the whole
 * run's latency tail).
 *
 * <p>What it writes: ThingsBoard telemetry of {@link #DEVICES} reserved device ids ({@code
 * 00000000-0000-0000-0000-0000000000NN}, which no device row names: random ids are version 4) with
 * timestamps in the first second of 1970. Every start rewrites the same cells: 125 timestamps × 4
 * keys per reserved id, 8,000 cells in all. No device list shows them; the telemetry API answers
 * for any id it is given, so they can be read by id. The warm-up counts in the store's and the
 * actors' metrics like any write. Best effort: a failure, an exception or the timeout is logged and
 * the start goes on.
 */
final class WarmUp {

  private static final Logger LOG = LoggerFactory.getLogger(WarmUp.class);

  /** Reserved device ids the warm-up writes under; spread over the actor shards. */
  static final int DEVICES = 16;

  private static final int IN_FLIGHT = 256;
  private static final int TIMESTAMPS = 1_000;

  /**
   * {@code fieldline.warm-up}.
   *
   * @param messages telemetry messages written before the listener opens; 0 = no warm-up
   * @param mqttMessages then about as many through a private MQTT listener ({@link MqttWarmUp})
   * @param timeout longest each warm-up may delay the start
   */
  record Settings(int messages, int mqttMessages, Duration timeout) {
    static Settings from(Config root) {
      ConfigReader r = ConfigReader.of(root, "fieldline.warm-up");
      int messages = r.integer("messages", 0);
      int mqttMessages = r.integer("mqtt-messages", 0);
      Duration timeout = r.positiveDuration("timeout");
      return r.validated(new Settings(messages, mqttMessages, timeout));
    }
  }

  private WarmUp() {}

  /**
   * The reserved id of warm-up device {@code index} (0 ≤ index < {@link #DEVICES}): {@link
   * DeviceId#reserved()}, so export leaves its messages out.
   */
  static DeviceId device(int index) {
    return new DeviceId(new UUID(0L, index + 1L));
  }

  /**
   * Writes {@code settings.messages()} messages through {@code gateway}, at most {@value
   * #IN_FLIGHT} at once, and returns once all are answered or the timeout passed.
   *
   * @return the messages stored
   */
  static int run(LocalDeviceInbox gateway, PayloadParser parser, Settings settings) {
    if (settings.messages() == 0) {
      return 0;
    }
    long started = System.nanoTime();
    long deadline = started + settings.timeout().toNanos();
    Semaphore slots = new Semaphore(IN_FLIGHT);
    AtomicInteger stored = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    int submitted = 0;
    try {
      while (submitted < settings.messages() && System.nanoTime() - deadline < 0) {
        if (!slots.tryAcquire(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
          break;
        }
        int i = submitted++;
        try {
          long now = System.currentTimeMillis();
          DeviceMessage message =
              new DeviceMessage.PostTelemetry(
                  device(i % DEVICES), now, parser.parseTelemetry(payload(i), now));
          gateway
              .submit(message)
              .whenComplete(
                  (ack, error) -> {
                    if (error == null && ack.isStored()) {
                      stored.incrementAndGet();
                    } else {
                      failed.incrementAndGet();
                    }
                    slots.release();
                  });
        } catch (RuntimeException e) {
          // A payload limit of this deployment or a gateway that refuses: not worth a failed start.
          slots.release();
          LOG.warn("warm-up stopped after {} messages: {}", i, e.toString());
          break;
        }
      }
      // Every slot back means every submitted message has its answer.
      if (slots.tryAcquire(IN_FLIGHT, deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
        slots.release(IN_FLIGHT);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    if (stored.get() < settings.messages()) {
      LOG.warn(
          "warm-up: {} of {} messages stored in {} ms ({} failed, {} unanswered); starting anyway",
          stored.get(),
          settings.messages(),
          millis,
          failed.get(),
          submitted - stored.get() - failed.get());
    } else {
      LOG.info("warm-up: {} messages through the write path in {} ms", stored.get(), millis);
    }
    return stored.get();
  }

  // A typical device message: four keys of three types, one timestamp of the first second of 1970.
  static byte[] payload(int i) {
    return ("{\"ts\":"
            + (1 + i % TIMESTAMPS)
            + ",\"values\":{\"temperature\":"
            + (20 + i % 10)
            + ".5,\"humidity\":"
            + (40 + i % 7)
            + ",\"door\":"
            + (i % 2 == 0)
            + ",\"state\":\"s"
            + (i % 5)
            + "\"}}")
        .getBytes(StandardCharsets.UTF_8);
  }
}
