package io.fieldline.server.fuzz;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A well-behaved device beside the fuzz campaign, through a real client (HiveMQ's, MQTT 3.1.1): one
 * QoS 1 message every {@code interval}, each of which must be acknowledged within {@code bound},
 * for as long as the campaign runs. It keeps every acknowledgement's latency, and the first way it
 * was let down. Its own thread publishes; the accessors are thread-safe.
 */
final class PublishingBystander {

  private final Mqtt3AsyncClient client;
  private final String token;
  private final Duration interval;
  private final Duration bound;
  private final ScheduledExecutorService publisher =
      Executors.newSingleThreadScheduledExecutor(
          task -> {
            Thread thread = new Thread(task, "fuzz-bystander");
            thread.setDaemon(true);
            return thread;
          });
  private long[] latencies = new long[1024];
  private int acknowledged;
  private long lastAck = System.nanoTime();
  private @Nullable String failure;

  PublishingBystander(
      InetSocketAddress listener,
      String clientId,
      String token,
      Duration interval,
      Duration bound) {
    this.client =
        Mqtt3Client.builder()
            .identifier(clientId)
            .serverHost(listener.getHostString())
            .serverPort(listener.getPort())
            .buildAsync();
    this.token = token;
    this.interval = interval;
    this.bound = bound;
  }

  /** Connects and starts publishing. */
  void start() throws Exception {
    client
        .connectWith()
        .simpleAuth()
        .username(token)
        .applySimpleAuth()
        .send()
        .get(bound.toMillis(), TimeUnit.MILLISECONDS);
    synchronized (this) {
      lastAck = System.nanoTime();
    }
    publisher.scheduleWithFixedDelay(
        this::publishOne, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void publishOne() {
    if (failure() != null) {
      return;
    }
    long ts;
    synchronized (this) {
      ts = 1_700_000_000_000L + acknowledged;
    }
    long started = System.nanoTime();
    try {
      client
          .publishWith()
          .topic(FuzzedPackets.TELEMETRY)
          .qos(MqttQos.AT_LEAST_ONCE)
          .payload(("{\"ts\":" + ts + ",\"values\":{\"ok\":1}}").getBytes(StandardCharsets.UTF_8))
          .send()
          .get(bound.toMillis(), TimeUnit.MILLISECONDS);
      long now = System.nanoTime();
      synchronized (this) {
        if (acknowledged == latencies.length) {
          latencies = Arrays.copyOf(latencies, latencies.length * 2);
        }
        latencies[acknowledged++] = now - started;
        lastAck = now;
      }
    } catch (TimeoutException e) {
      fail("no PUBACK within " + bound + " for message " + ts);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      fail("publish of message " + ts + " failed: " + e);
    }
  }

  private synchronized void fail(String why) {
    if (failure == null) {
      failure = why;
    }
  }

  /** How the bystander was let down, or null while every message is acknowledged in time. */
  synchronized @Nullable String failure() {
    // A publish gives up after the bound; longer without an acknowledgement means the bystander
    // itself stopped (or its thread is stuck).
    Duration silent = Duration.ofNanos(System.nanoTime() - lastAck);
    if (failure == null && silent.compareTo(bound.plus(interval).plusSeconds(1)) > 0) {
      failure = "no PUBACK for " + silent;
    }
    return failure;
  }

  synchronized long acknowledged() {
    return acknowledged;
  }

  /** The {@code quantile} (0 to 1) of the acknowledgement latencies so far. */
  synchronized Duration latency(double quantile) {
    if (acknowledged == 0) {
      return Duration.ZERO;
    }
    long[] sorted = Arrays.copyOf(latencies, acknowledged);
    Arrays.sort(sorted);
    int index = (int) Math.min(acknowledged - 1L, (long) Math.ceil(quantile * acknowledged) - 1);
    return Duration.ofNanos(sorted[Math.max(0, index)]);
  }

  /** Stops publishing (the message under way is waited for) and disconnects. */
  void stop() throws Exception {
    if (publisher.isShutdown()) {
      return;
    }
    publisher.shutdown();
    publisher.awaitTermination(bound.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    client.disconnect().get(bound.toMillis(), TimeUnit.MILLISECONDS);
  }
}
