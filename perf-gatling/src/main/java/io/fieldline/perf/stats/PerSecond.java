package io.fieldline.perf.stats;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counts per whole second of a run (index 0: the run's first second), as the MQTT protocol's and
 * the RPC caller's statistics keep them in an {@link AtomicLongArray}: their mean over a window and
 * the series as it goes into a summary.
 */
public final class PerSecond {

  private PerSecond() {}

  /** Mean count per second over seconds {@code [from, to)}, cut to the array; 0 when empty. */
  public static double mean(AtomicLongArray perSecond, int from, int to) {
    int first = Math.max(0, from);
    int last = Math.min(perSecond.length(), to);
    if (last <= first) {
      return 0;
    }
    long sum = 0;
    for (int i = first; i < last; i++) {
      sum += perSecond.get(i);
    }
    return sum / (double) (last - first);
  }

  /** The counts from second 0 to the last non-zero one. */
  public static List<Long> series(AtomicLongArray perSecond) {
    int last = -1;
    for (int i = 0; i < perSecond.length(); i++) {
      if (perSecond.get(i) != 0) {
        last = i;
      }
    }
    List<Long> out = new ArrayList<>(last + 1);
    for (int i = 0; i <= last; i++) {
      out.add(perSecond.get(i));
    }
    return out;
  }
}
