package io.fieldline.server.ws;

import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One live subscription of a WebSocket session ({@code TIMESERIES} or {@code ATTRIBUTES}): hears
 * its device's events, keeps those it asked for, and writes them as updates.
 *
 * <p>It listens before it reads the current values, so nothing stored in between is missed: events
 * arriving before {@link #start} are held (at most {@code maxHeld}; beyond that the client is
 * treated as too slow), then sent after the current values, in one first update. Per key, values
 * are sent in timestamp order: a value older than the last one sent for its key is dropped (a point
 * of a history-then-live subscription must also be newer, not only as new). What it keeps per key
 * is a timestamp and a 64-bit hash of the last value, never the value, for at most {@code maxKeys}
 * keys: a subscription to every key stops following new keys beyond that (telling the client once).
 * The values held before the start count against the session's outbound bytes ({@code outbound}),
 * like queued updates.
 *
 * <p>Thread-safe: events come from storage and REST threads, the start from a read's completion.
 */
final class LiveSubscription implements DeviceEventListener {

  /** A value with its timestamp (a time-series point, or an attribute and its update time). */
  record Point(long ts, KvEntry entry) {}

  /** What is kept of the last value sent for a key. */
  private record Sent(long ts, long hash) {}

  /** Takes and gives back bytes of the session's outbound allowance. */
  interface Outbound {
    /** Takes {@code bytes}; false (nothing taken) if they do not fit. */
    boolean take(long bytes);

    void give(long bytes);
  }

  private final WsCommand command;
  private final Consumer<String> sink;
  private final Runnable tooSlow;
  private final Outbound outbound;
  private final int maxHeld;
  private final int maxKeys;
  private final boolean series;
  private final Map<String, Sent> lastSent = new HashMap<>();
  private final Map<String, Long> watermark = new HashMap<>();
  private @Nullable List<Point> held = new ArrayList<>();
  private int heldEvents;
  // Outside the lock: close() gives them back without taking it.
  private final AtomicLong heldBytes = new AtomicLong();
  private boolean toldTooManyKeys;
  private volatile DeviceEvents.@Nullable Subscription registration;
  private volatile boolean closed;

  /**
   * @param sink writes one update to the client
   * @param tooSlow runs when more than {@code maxHeld} events, or more than {@code outbound}
   *     allows, wait for the current values
   * @param maxKeys the most keys followed
   */
  LiveSubscription(
      WsCommand command,
      Consumer<String> sink,
      Runnable tooSlow,
      Outbound outbound,
      int maxHeld,
      int maxKeys) {
    this.command = command;
    this.sink = sink;
    this.tooSlow = tooSlow;
    this.outbound = outbound;
    this.maxHeld = maxHeld;
    this.maxKeys = maxKeys;
    this.series = command.type() == WsCommand.Type.TIMESERIES && command.history();
  }

  WsCommand command() {
    return command;
  }

  /** Keeps the event registration, closed with this subscription. */
  void registered(DeviceEvents.Subscription subscription) {
    registration = subscription;
    if (closed) {
      subscription.close(); // closing twice is harmless
    }
  }

  @Override
  public boolean onEvent(DeviceEvent event) {
    List<Point> points = points(event);
    if (points.isEmpty()) {
      return false;
    }
    synchronized (this) {
      if (closed) {
        return false;
      }
      if (held != null) {
        long bytes = 0;
        for (Point point : points) {
          bytes += heldBytes(point);
        }
        if (++heldEvents > maxHeld || !outbound.take(bytes)) {
          tooSlow.run();
          return false;
        }
        heldBytes.addAndGet(bytes);
        if (closed) {
          outbound.give(heldBytes.getAndSet(0)); // close() may have run before the add
          return false;
        }
        held.addAll(points);
        return true;
      }
      WsUpdate update = new WsUpdate(command.cmdId());
      points.forEach(point -> add(update, point, false));
      if (!update.isEmpty()) {
        sink.accept(update.json());
      }
    }
    return true;
  }

  /**
   * Sends the first update: {@code current} (the latest values, the history or the attributes read
   * after listening started), then what arrived meanwhile.
   */
  synchronized void start(List<Point> current) {
    if (closed || held == null) {
      return;
    }
    WsUpdate first = new WsUpdate(command.cmdId());
    current.forEach(point -> add(first, point, true));
    held.forEach(point -> add(first, point, false));
    held = null;
    outbound.give(heldBytes.getAndSet(0));
    command.keys().ifPresent(keys -> keys.forEach(first::addEmpty));
    sink.accept(first.json());
  }

  /**
   * Stops listening. Takes no lock (it runs from the session's close, which may come from inside
   * another subscription's lock), so an event already being handled may still be written.
   */
  void close() {
    closed = true;
    // Values held for a start that will not come go back to the session's allowance.
    outbound.give(heldBytes.getAndSet(0));
    DeviceEvents.Subscription current = registration;
    if (current != null) {
      current.close();
    }
  }

  /**
   * Adds {@code point} to {@code update} if the client should get it.
   *
   * @param current whether it is one of the current values read for the first update
   */
  private void add(WsUpdate update, Point point, boolean current) {
    String key = point.entry().key();
    Map<String, ?> perKey = series ? watermark : lastSent;
    if (!perKey.containsKey(key) && perKey.size() >= maxKeys) {
      if (!toldTooManyKeys) {
        toldTooManyKeys = true;
        sink.accept(
            WsUpdate.error(
                command.cmdId(),
                WsUpdate.ErrorCode.BAD_REQUEST,
                "The device has more keys than a subscription follows ("
                    + maxKeys
                    + "): name the keys to follow"));
      }
      return;
    }
    if (series) {
      if (current) {
        watermark.merge(key, point.ts(), Math::max);
      } else {
        Long newest = watermark.get(key);
        if (newest != null && point.ts() <= newest) {
          return;
        }
      }
    } else {
      Sent last = lastSent.get(key);
      long hash = hash(point.entry());
      if (last != null
          && (point.ts() < last.ts() || (point.ts() == last.ts() && hash == last.hash()))) {
        return;
      }
      // A map keeps the key object of the first put: one name per key is kept.
      lastSent.put(key, new Sent(point.ts(), hash));
    }
    update.add(point.ts(), point.entry());
  }

  /**
   * A 64-bit FNV-1a hash of the value's type and text: "the same value again" without the value.
   */
  static long hash(KvEntry entry) {
    long hash = 0xcbf29ce484222325L ^ entry.type().ordinal();
    String text = entry.valueAsString();
    for (int i = 0; i < text.length(); i++) {
      hash = (hash ^ text.charAt(i)) * 0x100000001b3L;
    }
    return hash;
  }

  /** What a held point costs: its key and value text, two bytes a character, and its objects. */
  private static long heldBytes(Point point) {
    return 64 + 2L * (point.entry().key().length() + point.entry().valueAsString().length());
  }

  private List<Point> points(DeviceEvent event) {
    List<Point> points = new ArrayList<>();
    if (command.type() == WsCommand.Type.TIMESERIES
        && event instanceof DeviceEvent.TelemetryStored stored) {
      for (TsKvEntry entry : stored.entries()) {
        if (wanted(entry.kv())) {
          points.add(new Point(entry.ts(), entry.kv()));
        }
      }
    } else if (command.type() == WsCommand.Type.ATTRIBUTES
        && event instanceof DeviceEvent.AttributesUpdated updated
        && command.scope().contains(updated.scope())) {
      for (AttributeKvEntry entry : updated.entries()) {
        if (wanted(entry.kv())) {
          points.add(new Point(entry.lastUpdateTs(), entry.kv()));
        }
      }
    }
    return points;
  }

  private boolean wanted(KvEntry entry) {
    return command.keys().map(keys -> keys.contains(entry.key())).orElse(true);
  }
}
