package io.fieldline.common.port;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts outstanding work against a high and a low watermark and tells listeners when the count
 * crosses them: overloaded at or above {@code highWater}, relieved again at or below {@code
 * lowWater}. The hysteresis keeps sockets from flapping between paused and reading.
 *
 * <p>The storage layer owns a gauge of its in-flight and queued writes; the transport subscribes
 * and pauses reading from sockets while it is overloaded. Thread-safe; listeners are called on the
 * thread that caused the transition and must not block.
 */
public final class PressureGauge {

  /** Notified on each transition; must be cheap and non-blocking. */
  @FunctionalInterface
  public interface Listener {
    void onPressureChanged(boolean overloaded);
  }

  private final String name;
  private final int highWater;
  private final int lowWater;
  private final AtomicInteger level = new AtomicInteger();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private volatile boolean overloaded;

  public PressureGauge(String name, int highWater, int lowWater) {
    if (lowWater < 0 || lowWater >= highWater) {
      throw new IllegalArgumentException(
          "need 0 <= lowWater < highWater, got " + lowWater + " and " + highWater);
    }
    this.name = name;
    this.highWater = highWater;
    this.lowWater = lowWater;
  }

  public String name() {
    return name;
  }

  public int level() {
    return level.get();
  }

  public boolean isOverloaded() {
    return overloaded;
  }

  public void subscribe(Listener listener) {
    listeners.add(listener);
  }

  public void unsubscribe(Listener listener) {
    listeners.remove(listener);
  }

  public void increment() {
    int now = level.incrementAndGet();
    if (now >= highWater && !overloaded) {
      recheck();
    }
  }

  public void decrement() {
    int now = level.decrementAndGet();
    if (now <= lowWater && overloaded) {
      recheck();
    }
  }

  // Transitions are rare; a lock here keeps the flag and the notifications in one order.
  private synchronized void recheck() {
    int now = level.get();
    boolean next = overloaded ? now > lowWater : now >= highWater;
    if (next != overloaded) {
      overloaded = next;
      for (Listener listener : listeners) {
        listener.onPressureChanged(next);
      }
    }
  }
}
