package io.fieldline.cluster.ring;

import io.fieldline.cluster.ClusterView;
import io.fieldline.cluster.HashRing;
import io.fieldline.common.DeviceId;
import io.fieldline.common.feed.DeviceMoves;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The rings this node has had, with the time each came into force, for {@link DeviceMoves}: a
 * device's owners over a span of time are its owners on each ring in force during it.
 *
 * <p>Bounded: the newest {@value #MAX_RINGS} rings, and none older than {@code keepMillis} except
 * the one in force. Fed by {@link #accept} from the ring thread; read from any thread (a copy-on-
 * write list under a lock held only to add or copy).
 */
public final class RingHistory implements DeviceMoves {

  static final int MAX_RINGS = 32;

  private record Ring(long since, HashRing ring) {}

  private final LongSupplier clock;
  private final long keepMillis;
  private final Object lock = new Object();
  private List<Ring> rings = List.of(); // guarded by lock for writes; replaced whole

  /**
   * @param keepMillis how long a replaced ring is remembered (longer than any wait it serves)
   */
  public RingHistory(LongSupplier clock, long keepMillis) {
    this.clock = clock;
    this.keepMillis = keepMillis;
  }

  /** Records a view; a view with the same ring nodes as the last one changes nothing. */
  public void accept(ClusterView view) {
    HashRing ring = view.ring();
    long now = clock.getAsLong();
    synchronized (lock) {
      if (!rings.isEmpty() && rings.get(rings.size() - 1).ring().nodes().equals(ring.nodes())) {
        return;
      }
      List<Ring> next = new ArrayList<>(rings.size() + 1);
      for (int i = 0; i < rings.size(); i++) {
        Ring old = rings.get(i);
        // A ring replaced before now - keep is no longer needed; the newest always stays.
        long replacedAt = i + 1 < rings.size() ? rings.get(i + 1).since() : now;
        if (now - replacedAt <= keepMillis) {
          next.add(old);
        }
      }
      next.add(new Ring(now, ring));
      while (next.size() > MAX_RINGS) {
        next.remove(0);
      }
      rings = List.copyOf(next);
    }
  }

  @Override
  public Set<String> owners(DeviceId device, long fromMillis, long toMillis) {
    List<Ring> snapshot;
    synchronized (lock) {
      snapshot = rings;
    }
    Set<String> owners = new HashSet<>(2);
    for (int i = 0; i < snapshot.size(); i++) {
      Ring ring = snapshot.get(i);
      long until = i + 1 < snapshot.size() ? snapshot.get(i + 1).since() : Long.MAX_VALUE;
      // In force during [since, until): overlaps [from, to]? The first ring also stands for the
      // time before it (this node knew no other).
      boolean overlaps = (i == 0 || ring.since() <= toMillis) && until > fromMillis;
      if (overlaps) {
        String owner = ring.ring().ownerOf(device);
        if (owner != null) {
          owners.add(owner);
        }
      }
    }
    return owners;
  }
}
