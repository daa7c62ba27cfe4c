package io.fieldline.perf.live;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * Publish → WebSocket update, per message: which messages of the watched devices were published and
 * acknowledged (fed by {@link LivePayload}, timestamps on Gatling's clock), which of them reached
 * their subscriber as a live update and when (the frame's arrival on the same clock), and from that
 * the latency of each update ({@code arrival − ts}), how far it came after the message's own PUBACK
 * ({@code arrival − PUBACK}), and what was lost.
 *
 * <p>Each subscription watches one device and has an id unique over the whole run (the command's
 * {@code cmdId}, the update's {@code subscriptionId}). Its first update carries the current values
 * and is not timed; from then on every acknowledged message newer than the newest point of that
 * first update is <em>expected</em> as a live update, and is <em>lost</em> if none carries it. A
 * subscription that never got its first update expects every acknowledged message sent after it
 * subscribed. Messages arriving as live updates are timed even when they were not expected (in
 * flight as the subscription started).
 *
 * <p>Figures are computed by {@link #describe} after the run, per named window of seconds (by the
 * message's timestamp, counted from the run's origin), with the subscriptions that lost updates
 * listed (their device, how many, and when: ms from the origin). Thread-safe: messages are noted on
 * the devices' event loops, updates on the subscribers'.
 */
public final class LiveUpdateStats {

  /** An update this much later than its PUBACK or its publish is counted as slow, per second. */
  static final long SLOW_MILLIS = 50;

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final long MAX_TRACKED_MILLIS = 3_600_000L;
  private static final int MAX_ERROR_SAMPLES = 5;

  private final Map<String, Device> byToken = new ConcurrentHashMap<>();
  private final Map<Integer, Subscription> subscriptions = new ConcurrentHashMap<>();
  private final LongAdder errors = new LongAdder();
  private final List<String> errorSamples = new ArrayList<>();
  private final LongAdder unknownSubscription = new LongAdder();
  private final LongAdder malformed = new LongAdder();
  private final LongAdder duplicates = new LongAdder();
  private final LongAdder unmatched = new LongAdder();

  /** One watched device: its messages by timestamp. */
  private static final class Device {
    final String id;
    final Map<Long, Message> messages = new ConcurrentHashMap<>();

    Device(String id) {
      this.id = id;
    }
  }

  /** One published message of a watched device. */
  private static final class Message {
    final long ts;
    volatile long ackMillis = -1;
    final AtomicLong arrivalMillis = new AtomicLong(-1);

    Message(long ts) {
      this.ts = ts;
    }
  }

  /** One live subscription; its fields are guarded by itself. */
  private static final class Subscription {
    final Device device;
    long subscribedMillis = -1;
    boolean started;
    long firstArrivalMillis = -1;

    /** Messages up to this timestamp were covered by the first update (its newest point). */
    long coveredTs = Long.MIN_VALUE;

    int firstPoints;

    Subscription(Device device) {
      this.device = device;
    }
  }

  /**
   * Subscription {@code subscriptionId} watches the device with id {@code deviceId}, which
   * publishes with access token {@code token}. Call before the run, once per subscription; one
   * device per subscription.
   */
  public LiveUpdateStats watch(int subscriptionId, String deviceId, String token) {
    if (subscriptions.containsKey(subscriptionId) || byToken.containsKey(token)) {
      throw new IllegalArgumentException(
          "subscription " + subscriptionId + " or device " + deviceId + " watched twice");
    }
    Device device = new Device(deviceId);
    byToken.put(token, device);
    subscriptions.put(subscriptionId, new Subscription(device));
    return this;
  }

  /** Subscriptions watched. */
  public int subscriptionCount() {
    return subscriptions.size();
  }

  /** The device with access token {@code token} published a message with timestamp {@code ts}. */
  void sent(String token, long ts) {
    Device device = byToken.get(token);
    if (device != null) {
      device.messages.putIfAbsent(ts, new Message(ts));
    }
  }

  /** That message was acknowledged at {@code ackMillis}. */
  void acked(String token, long ts, long ackMillis) {
    Device device = byToken.get(token);
    Message message = device == null ? null : device.messages.get(ts);
    if (message != null) {
      message.ackMillis = ackMillis;
    }
  }

  /** The command opening subscription {@code subscriptionId} was sent at {@code millis}. */
  public void subscribed(int subscriptionId, long millis) {
    Subscription subscription = subscriptions.get(subscriptionId);
    if (subscription != null) {
      synchronized (subscription) {
        subscription.subscribedMillis = millis;
      }
    }
  }

  /** One WebSocket text message {@code text} arrived at {@code arrivalMillis}. */
  public void received(String text, long arrivalMillis) {
    JsonNode update;
    try {
      update = MAPPER.readTree(text);
    } catch (IOException e) { // JsonProcessingException: not JSON
      update = null;
    }
    if (update == null || !update.isObject()) {
      malformed.increment();
      return;
    }
    if (update.path("errorCode").asInt(0) != 0) {
      errors.increment();
      synchronized (errorSamples) {
        if (errorSamples.size() < MAX_ERROR_SAMPLES) {
          errorSamples.add(text);
        }
      }
      return;
    }
    Subscription subscription = subscriptions.get(update.path("subscriptionId").asInt(-1));
    if (subscription == null) {
      unknownSubscription.increment();
      return;
    }
    TreeSet<Long> points = new TreeSet<>();
    for (JsonNode values : update.path("data")) {
      for (JsonNode point : values) {
        if (point.isArray() && point.size() > 0) {
          points.add(point.get(0).asLong());
        }
      }
    }
    synchronized (subscription) {
      if (!subscription.started) {
        subscription.started = true;
        subscription.firstArrivalMillis = arrivalMillis;
        subscription.firstPoints = points.size();
        if (!points.isEmpty()) {
          subscription.coveredTs = points.last();
        }
        return;
      }
    }
    for (long ts : points) {
      Message message = subscription.device.messages.get(ts);
      if (message == null) {
        unmatched.increment();
      } else if (!message.arrivalMillis.compareAndSet(-1, arrivalMillis)) {
        duplicates.increment();
      }
    }
  }

  /**
   * The figures as they go into the run's summary: whole run, and per window of {@code windows}
   * (name → seconds {@code [from, to)} after {@code originMillis}, by the message's timestamp).
   */
  public Map<String, Object> describe(long originMillis, Map<String, int[]> windows) {
    Tally all = new Tally(Integer.MIN_VALUE, Integer.MAX_VALUE);
    Map<String, Tally> named = new LinkedHashMap<>();
    windows.forEach((name, seconds) -> named.put(name, new Tally(seconds[0], seconds[1])));
    Series series = new Series();
    Histogram firstUpdate = histogram();
    int started = 0;
    long sent = 0;
    long acked = 0;
    for (Device device : byToken.values()) {
      sent += device.messages.size();
      for (Message message : device.messages.values()) {
        if (message.ackMillis >= 0) {
          acked++;
        }
      }
    }
    Map<Integer, Object> lostBySubscription = new TreeMap<>();
    for (Map.Entry<Integer, Subscription> entry : subscriptions.entrySet()) {
      Subscription subscription = entry.getValue();
      long covered;
      long firstArrival;
      synchronized (subscription) {
        firstArrival = subscription.firstArrivalMillis;
        if (subscription.started) {
          started++;
          if (subscription.subscribedMillis >= 0) {
            firstUpdate.recordValue(
                clamp(subscription.firstArrivalMillis - subscription.subscribedMillis));
          }
          covered = subscription.coveredTs;
        } else {
          covered =
              subscription.subscribedMillis >= 0 ? subscription.subscribedMillis : Long.MAX_VALUE;
        }
      }
      long lost = 0;
      long firstLost = Long.MAX_VALUE;
      long lastLost = Long.MIN_VALUE;
      for (Message message : subscription.device.messages.values()) {
        int second = (int) Math.floorDiv(message.ts - originMillis, 1000L);
        boolean expected = message.ackMillis >= 0 && message.ts > covered;
        long arrival = message.arrivalMillis.get();
        if (expected && arrival < 0) {
          lost++;
          firstLost = Math.min(firstLost, message.ts);
          lastLost = Math.max(lastLost, message.ts);
        }
        all.add(message, expected, arrival);
        for (Tally tally : named.values()) {
          if (second >= tally.from && second < tally.to) {
            tally.add(message, expected, arrival);
          }
        }
        series.add(second, message, expected, arrival);
      }
      if (lost > 0) {
        Map<String, Object> loss = new LinkedHashMap<>();
        loss.put("device", subscription.device.id);
        loss.put("lost", lost);
        loss.put("firstLostMillis", firstLost - originMillis);
        loss.put("lastLostMillis", lastLost - originMillis);
        loss.put("firstUpdateMillis", firstArrival < 0 ? null : firstArrival - originMillis);
        lostBySubscription.put(entry.getKey(), loss);
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("subscriptions", subscriptions.size());
    out.put("devices", byToken.size());
    out.put("subscriptionsStarted", started);
    out.put("firstUpdateMillis", percentiles(firstUpdate));
    out.put("errors", errors.sum());
    synchronized (errorSamples) {
      out.put("errorSamples", List.copyOf(errorSamples));
    }
    out.put("unknownSubscription", unknownSubscription.sum());
    out.put("malformed", malformed.sum());
    out.put("messagesSent", sent);
    out.put("messagesAcked", acked);
    out.put("duplicates", duplicates.sum());
    out.put("unmatched", unmatched.sum());
    out.putAll(all.describe());
    Map<String, Object> named2 = new LinkedHashMap<>();
    named.forEach(
        (name, tally) -> {
          Map<String, Object> window = new LinkedHashMap<>();
          window.put("seconds", List.of(tally.from, tally.to));
          window.putAll(tally.describe());
          named2.put(name, window);
        });
    out.put("windows", named2);
    out.putAll(series.describe());
    out.put("lostBySubscription", lostBySubscription);
    return out;
  }

  /** Counts and histograms of the messages of one window. */
  private static final class Tally {
    final int from;
    final int to;
    long expected;
    long receivedExpected;
    long received;
    long receivedUnacked;
    long beforeAck;
    final Histogram latency = histogram();
    final Histogram afterAck = histogram();

    Tally(int from, int to) {
      this.from = from;
      this.to = to;
    }

    void add(Message message, boolean isExpected, long arrival) {
      if (isExpected) {
        expected++;
        if (arrival >= 0) {
          receivedExpected++;
        }
      }
      if (arrival < 0) {
        return;
      }
      received++;
      latency.recordValue(clamp(arrival - message.ts));
      if (message.ackMillis < 0) {
        receivedUnacked++;
      } else {
        if (arrival < message.ackMillis) {
          beforeAck++;
        }
        afterAck.recordValue(clamp(arrival - message.ackMillis));
      }
    }

    Map<String, Object> describe() {
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("expected", expected);
      out.put("receivedExpected", receivedExpected);
      out.put("lost", expected - receivedExpected);
      out.put("received", received);
      out.put("receivedUnacked", receivedUnacked);
      out.put("beforeAck", beforeAck);
      out.put("updateLatencyMillis", percentiles(latency));
      out.put("afterAckMillis", percentiles(afterAck));
      return out;
    }
  }

  /** Per second of the messages' timestamps: received, lost, slow and the slowest update. */
  private static final class Series {
    final TreeMap<Integer, long[]> bySecond = new TreeMap<>();

    void add(int second, Message message, boolean expected, long arrival) {
      if (second < 0) {
        return;
      }
      long[] counts = bySecond.computeIfAbsent(second, s -> new long[4]);
      if (arrival >= 0) {
        long latency = arrival - message.ts;
        counts[0]++;
        if (latency >= SLOW_MILLIS) {
          counts[2]++;
        }
        counts[3] = Math.max(counts[3], latency);
      } else if (expected) {
        counts[1]++;
      }
    }

    Map<String, Object> describe() {
      int last = bySecond.isEmpty() ? -1 : bySecond.lastKey();
      String[] names = {
        "receivedPerSecond", "lostPerSecond", "slowPerSecond", "maxLatencyMillisPerSecond"
      };
      Map<String, Object> out = new LinkedHashMap<>();
      for (int i = 0; i < names.length; i++) {
        List<Long> values = new ArrayList<>(last + 1);
        for (int s = 0; s <= last; s++) {
          long[] counts = bySecond.get(s);
          values.add(counts == null ? 0 : counts[i]);
        }
        out.put(names[i], values);
      }
      return out;
    }
  }

  private static Histogram histogram() {
    return new Histogram(MAX_TRACKED_MILLIS, 3);
  }

  private static long clamp(long millis) {
    return Math.max(0, Math.min(MAX_TRACKED_MILLIS, millis));
  }

  /** Count, mean and percentiles in ms (whole ms: both ends are stamped in ms). */
  static Map<String, Object> percentiles(Histogram histogram) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("count", histogram.getTotalCount());
    if (histogram.getTotalCount() == 0) {
      return out;
    }
    out.put("mean", Math.round(histogram.getMean() * 10) / 10.0);
    out.put("p50", histogram.getValueAtPercentile(50));
    out.put("p90", histogram.getValueAtPercentile(90));
    out.put("p99", histogram.getValueAtPercentile(99));
    out.put("p999", histogram.getValueAtPercentile(99.9));
    out.put("max", histogram.getMaxValue());
    return out;
  }
}
