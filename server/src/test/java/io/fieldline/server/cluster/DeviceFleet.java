package io.fieldline.server.cluster;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import io.fieldline.common.DeviceId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Devices that publish QoS 1 telemetry with their own timestamps (key {@code seq}) the way a real
 * device does: a message counts as delivered only when its PUBACK arrives; when the connection
 * breaks, the device reconnects to a node that is up and retransmits every message that was sent
 * and not acknowledged, with the same timestamp, before it sends new ones (MQTT 3.1.1 §4.4).
 *
 * <p>HiveMQ MQTT client (async, shared event loops), clean sessions: retransmission is done here,
 * so it does not depend on a node keeping session state. Thread-safe.
 */
public final class DeviceFleet implements AutoCloseable {

  private static final String TOPIC = "v1/devices/me/telemetry";

  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
  private final List<Device> devices = new ArrayList<>();
  private final Supplier<List<Integer>> mqttPorts;
  private final Duration pacing;
  private final AtomicInteger reconnects = new AtomicInteger();
  private final AtomicLong acked = new AtomicLong();
  private volatile boolean stopping;

  /**
   * @param mqttPorts MQTT ports of the nodes that are up now; a device picks one (round robin)
   * @param pacing pause after each acknowledgement before the device's next new message
   */
  public DeviceFleet(Supplier<List<Integer>> mqttPorts, Duration pacing) {
    this.mqttPorts = mqttPorts;
    this.pacing = pacing;
  }

  /**
   * Adds a device whose first connection goes to {@code firstPort}; timestamps start at {@code
   * base}.
   */
  public void add(DeviceId id, String token, long base, int firstPort) {
    devices.add(new Device(devices.size(), id, token, base, firstPort));
  }

  /** Starts every device publishing new messages until {@link #stop()}. */
  public void start() {
    devices.forEach(device -> scheduler.execute(() -> device.connect(device.firstPort)));
  }

  /** No new messages from now on; devices keep retransmitting until everything is acknowledged. */
  public void stop() {
    stopping = true;
  }

  /** Every message sent was acknowledged (call after {@link #stop()}). */
  public boolean drained() {
    return devices.stream().allMatch(Device::drained);
  }

  public long ackedCount() {
    return acked.get();
  }

  public int reconnects() {
    return reconnects.get();
  }

  public List<Device> devices() {
    return devices;
  }

  /** The timestamps whose PUBACK arrived, per device, at this moment. */
  public Map<DeviceId, Set<Long>> ackedSnapshot() {
    Map<DeviceId, Set<Long>> snapshot = new ConcurrentHashMap<>();
    for (Device device : devices) {
      snapshot.put(device.id, Set.copyOf(device.acked));
    }
    return snapshot;
  }

  @Override
  public void close() {
    stopping = true;
    scheduler.shutdownNow();
    for (Device device : devices) {
      device.disconnect();
    }
  }

  /** One device; its state is guarded by its own monitor. */
  public final class Device {
    public final DeviceId id;
    final String token;
    final int firstPort;
    private final int index;
    private final long base;
    private final Set<Long> acked = ConcurrentHashMap.newKeySet();
    private final Set<Long> sent = new TreeSet<>();
    private final Set<Long> retransmitted = new TreeSet<>();
    private final Deque<Long> retransmit = new ArrayDeque<>();
    private Mqtt3AsyncClient client;
    private int generation;
    private boolean inFlight;
    private long next;

    Device(int index, DeviceId id, String token, long base, int firstPort) {
      this.index = index;
      this.id = id;
      this.token = token;
      this.base = base;
      this.firstPort = firstPort;
    }

    /** Every timestamp this device sent (each at least once). */
    public synchronized Set<Long> sent() {
      return Set.copyOf(sent);
    }

    public Set<Long> acked() {
      return acked;
    }

    /** The timestamps sent more than once (no PUBACK for an earlier attempt). */
    public synchronized Set<Long> retransmitted() {
      return Set.copyOf(retransmitted);
    }

    public synchronized boolean drained() {
      return !inFlight && retransmit.isEmpty() && acked.containsAll(sent);
    }

    private void connect(int port) {
      Mqtt3AsyncClient candidate =
          MqttClient.builder()
              .useMqttVersion3()
              .identifier("fleet-" + index)
              .serverHost("127.0.0.1")
              .serverPort(port)
              .buildAsync();
      int connection;
      synchronized (this) {
        connection = ++generation;
        client = candidate;
      }
      candidate
          .connectWith()
          .cleanSession(true)
          .keepAlive(30)
          .simpleAuth()
          .username(token)
          .applySimpleAuth()
          .send()
          .orTimeout(10, TimeUnit.SECONDS)
          .whenComplete(
              (connAck, error) -> {
                if (error != null) {
                  reconnectLater(connection);
                } else {
                  pump(connection);
                }
              });
    }

    /** Sends the next message: a retransmission first, else a new one unless stopping. */
    private void pump(int connection) {
      long ts;
      Mqtt3AsyncClient current;
      synchronized (this) {
        if (connection != generation || inFlight) {
          return;
        }
        Long again = retransmit.poll();
        if (again != null) {
          ts = again;
          retransmitted.add(ts);
        } else if (!stopping) {
          ts = base + next++;
          sent.add(ts);
        } else {
          return;
        }
        inFlight = true;
        current = client;
      }
      byte[] payload =
          ("{\"ts\":" + ts + ",\"values\":{\"seq\":" + (ts - base) + "}}")
              .getBytes(StandardCharsets.UTF_8);
      CompletableFuture<?> puback =
          current
              .publishWith()
              .topic(TOPIC)
              .qos(MqttQos.AT_LEAST_ONCE)
              .payload(payload)
              .send()
              .orTimeout(30, TimeUnit.SECONDS);
      puback.whenComplete((ok, error) -> onOutcome(connection, ts, error));
    }

    private void onOutcome(int connection, long ts, Throwable error) {
      if (error == null && acked.add(ts)) {
        DeviceFleet.this.acked.incrementAndGet(); // a PUBACK is a PUBACK, whichever connection
      }
      synchronized (this) {
        if (connection != generation) {
          return;
        }
        inFlight = false;
        if (error != null) {
          // No PUBACK: the connection is gone (or the server closed it). Reconnect, resend.
          for (long pending : sent) {
            if (!acked.contains(pending) && !retransmit.contains(pending)) {
              retransmit.add(pending);
            }
          }
          reconnectLater(connection);
          return;
        }
      }
      if (!scheduler.isShutdown()) {
        scheduler.schedule(() -> pump(connection), pacing.toMillis(), TimeUnit.MILLISECONDS);
      }
    }

    private void reconnectLater(int connection) {
      Mqtt3AsyncClient old;
      synchronized (this) {
        if (connection != generation) {
          return;
        }
        generation++; // late outcomes of the old connection change nothing
        old = client;
      }
      reconnects.incrementAndGet();
      old.disconnect().exceptionally(ignored -> null);
      if (!scheduler.isShutdown()) {
        scheduler.schedule(
            () -> {
              List<Integer> ports = mqttPorts.get();
              connect(ports.get(Math.floorMod(index + reconnects.get(), ports.size())));
            },
            200,
            TimeUnit.MILLISECONDS);
      }
    }

    void disconnect() {
      Mqtt3AsyncClient current;
      synchronized (this) {
        current = client;
      }
      if (current != null) {
        current.disconnect().exceptionally(ignored -> null);
      }
    }
  }
}
