package io.fieldline.server.ws;

import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TsKvEntry;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * of a history-then-live subscription must also be newer, not only as new).
 *
 * <p>Thread-safe: events come from storage and REST threads, the start from a read's completion.
 */
final class LiveSubscription implements DeviceEventListener {

  /** A value with its timestamp (a time-series point, or an attribute and its update time). */
  record Point(long ts, KvEntry entry) {}

  private final WsCommand command;
  private final Consumer<String> sink;
  private final Runnable tooSlow;
  private final int maxHeld;
  private final Map<String, Long> lastSent = new HashMap<>();
  private @Nullable List<Point> held = new ArrayList<>();
  private volatile DeviceEvents.@Nullable Subscription registration;
  private volatile boolean closed;

  /**
   * @param sink writes one update to the client
   * @param tooSlow runs when more than {@code maxHeld} values wait for the current ones
   */
  LiveSubscription(WsCommand command, Consumer<String> sink, Runnable tooSlow, int maxHeld) {
    this.command = command;
    this.sink = sink;
    this.tooSlow = tooSlow;
    this.maxHeld = maxHeld;
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
        if (held.size() + points.size() > maxHeld) {
          tooSlow.run();
          return false;
        }
        held.addAll(points);
        return true;
      }
      WsUpdate update = new WsUpdate(command.cmdId());
      points.forEach(point -> add(update, point));
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
    current.forEach(point -> add(first, point));
    held.forEach(point -> add(first, point));
    held = null;
    command.keys().ifPresent(keys -> keys.forEach(first::addEmpty));
    sink.accept(first.json());
  }

  /**
   * Stops listening. Takes no lock (it runs from the session's close, which may come from inside
   * another subscription's lock), so an event already being handled may still be written.
   */
  void close() {
    closed = true;
    DeviceEvents.Subscription current = registration;
    if (current != null) {
      current.close();
    }
  }

  private void add(WsUpdate update, Point point) {
    String key = point.entry().key();
    Long last = lastSent.get(key);
    boolean series = command.type() == WsCommand.Type.TIMESERIES && command.history();
    if (last == null || point.ts() > last || (!series && point.ts() == last)) {
      lastSent.put(key, point.ts());
      update.add(point.ts(), point.entry());
    }
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
