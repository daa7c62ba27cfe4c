package io.fieldline.cluster.ring;

import io.fieldline.cluster.ClusterConfig;
import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterView;
import io.fieldline.cluster.HashRing;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.membership.MembershipSnapshot;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns membership snapshots into the {@link ClusterView} routing uses.
 *
 * <p>The ring holds the other registered members, plus this node only while it claims ownership
 * (connected to ZooKeeper and registered in the current session). A change of this node's own claim
 * is applied at once: a node that lost ZooKeeper stops owning devices immediately, and its devices
 * are forwarded to the nodes that will own them once its session expires. A change of the other
 * members waits {@code rebalance-delay}; every change within that time is applied by the one
 * rebuild at its end, so a member that drops out and comes back within it moves nothing.
 *
 * <p>Snapshots are handed over from Curator threads; everything else is confined to the keeper's
 * own thread ({@code fieldline-cluster-ring}). {@link #view()} is a volatile read, any thread.
 */
public final class RingKeeper implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RingKeeper.class);

  private final ClusterConfig config;
  private final ClusterMetrics metrics;
  private final ScheduledExecutorService executor;
  private final List<Consumer<ClusterView>> listeners = new CopyOnWriteArrayList<>();
  private volatile ClusterView view = ClusterView.EMPTY;
  private volatile Map<String, Member> latestMembers = Map.of();
  private @Nullable MembershipSnapshot latest;
  private @Nullable ScheduledFuture<?> pendingRebuild;

  /** Starts the keeper's thread; nothing is owned until the first snapshot. */
  public RingKeeper(ClusterConfig config, ClusterMetrics metrics) {
    this.config = config;
    this.metrics = metrics;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "fieldline-cluster-ring");
              thread.setDaemon(true);
              return thread;
            });
  }

  /** Takes a snapshot from any thread; never blocks. */
  public void accept(MembershipSnapshot snapshot) {
    if (!executor.isShutdown()) {
      executor.execute(() -> onSnapshot(snapshot));
    }
  }

  /** The view in force. */
  public ClusterView view() {
    return view;
  }

  /** The members of the latest snapshot, not delayed (takeover notices go to all of them). */
  public Map<String, Member> latestMembers() {
    return latestMembers;
  }

  /** Called on the keeper's thread after every rebuild, changed ring or not. */
  public void addListener(Consumer<ClusterView> listener) {
    listeners.add(listener);
  }

  private void onSnapshot(MembershipSnapshot snapshot) {
    MembershipSnapshot previous = latest;
    latest = snapshot;
    latestMembers = snapshot.members();
    metrics.members(snapshot.members().size());
    if (previous == null || previous.claiming() != snapshot.claiming()) {
      rebuild(); // this node's own claim: never delayed
      return;
    }
    if (nodesFor(snapshot).equals(view.ring().nodes())) {
      if (!addresses(snapshot).equals(view.members())) {
        // Same nodes, new addresses (a node restarted with its id on other ports): use them now.
        publish(new ClusterView(view.ring(), addresses(snapshot), view.claiming()));
      }
      return;
    }
    if (pendingRebuild == null) {
      if (config.rebalanceDelay().isZero()) {
        rebuild();
      } else {
        pendingRebuild =
            executor.schedule(
                this::rebuild, config.rebalanceDelay().toMillis(), TimeUnit.MILLISECONDS);
      }
    }
  }

  private void rebuild() {
    pendingRebuild = null;
    MembershipSnapshot snapshot = latest;
    if (snapshot == null) {
      return;
    }
    Set<String> nodes = nodesFor(snapshot);
    ClusterView current = view;
    boolean changed = !nodes.equals(current.ring().nodes());
    HashRing ring = changed ? HashRing.of(nodes, config.virtualNodes()) : current.ring();
    ClusterView next = new ClusterView(ring, addresses(snapshot), snapshot.claiming());
    if (changed) {
      metrics.ringChanged();
      LOG.info(
          "[ring|{}] {} node(s): {}{}",
          config.nodeId(),
          nodes.size(),
          nodes,
          snapshot.claiming()
              ? ""
              : " (this node not claiming: ZooKeeper connection or registration missing)");
    }
    publish(next);
  }

  private void publish(ClusterView next) {
    view = next;
    metrics.ring(next.ring(), next.claiming());
    for (Consumer<ClusterView> listener : listeners) {
      try {
        listener.accept(next);
      } catch (RuntimeException e) {
        LOG.error("[ring|{}] view listener failed", config.nodeId(), e);
      }
    }
  }

  /** The ring's nodes for a snapshot: the other members, and this node only while it claims. */
  private Set<String> nodesFor(MembershipSnapshot snapshot) {
    Set<String> nodes = new TreeSet<>(snapshot.members().keySet());
    nodes.remove(config.nodeId());
    if (snapshot.claiming()) {
      nodes.add(config.nodeId());
    }
    return nodes;
  }

  /** Current members' addresses, plus the last known ones of nodes still on the ring. */
  private Map<String, Member> addresses(MembershipSnapshot snapshot) {
    Map<String, Member> addresses = new HashMap<>(snapshot.members());
    for (String node : view.ring().nodes()) {
      Member known = view.members().get(node);
      if (known != null) {
        addresses.putIfAbsent(node, known);
      }
    }
    return addresses;
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
