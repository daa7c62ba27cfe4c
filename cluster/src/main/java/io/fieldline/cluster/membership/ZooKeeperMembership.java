package io.fieldline.cluster.membership;

import io.fieldline.cluster.ClusterConfig;
import io.fieldline.cluster.Member;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's view of the cluster's members in ZooKeeper (Curator 5).
 *
 * <p>Each node keeps one EPHEMERAL znode {@code <root>/<nodeId>} whose data is its {@link Member}
 * JSON. A Curator {@link PersistentNode} owns it: after a session expiry it re-creates the znode in
 * the new session, so the node re-registers by itself when ZooKeeper is back. A {@link
 * CuratorCache} watches {@code <root>}; on every change of the members or of the connection state a
 * fresh {@link MembershipSnapshot} goes to the listener.
 *
 * <p>Thread-safe. Snapshots are delivered one at a time, in order, on Curator's threads: the
 * listener must be quick and must not block (hand the snapshot to another thread).
 */
public final class ZooKeeperMembership implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperMembership.class);

  private final ClusterConfig config;
  private final Consumer<MembershipSnapshot> listener;
  private final CuratorFramework client;
  private final CuratorCache cache;
  private final String logPrefix;
  private final CountDownLatch initialized = new CountDownLatch(1);
  private final Object publishLock = new Object();
  private volatile boolean connected;
  private volatile boolean cacheReady;
  // Session in which the PersistentNode last created our znode: the cache alone may not say so,
  // since it reports no event when a znode is re-created with the same data.
  private volatile long createdInSession;
  private volatile @Nullable PersistentNode registration;
  private volatile boolean closed;

  /**
   * Creates the Curator client; nothing connects before {@link #start()}.
   *
   * @param listener receives every snapshot, in order, on a Curator thread; must not block
   */
  public ZooKeeperMembership(ClusterConfig config, Consumer<MembershipSnapshot> listener) {
    this.config = config;
    this.listener = listener;
    this.logPrefix = "[cluster|" + config.nodeId() + "]";
    this.client =
        CuratorFrameworkFactory.builder()
            .connectString(config.zookeeper())
            .sessionTimeoutMs(Math.toIntExact(config.sessionTimeout().toMillis()))
            .connectionTimeoutMs(Math.toIntExact(config.connectionTimeout().toMillis()))
            // Operations retry for about the connection timeout; reconnecting itself never stops.
            .retryPolicy(new BoundedExponentialBackoffRetry(100, 2_000, 10))
            .build();
    this.cache = CuratorCache.build(client, config.root());
  }

  /**
   * Connects, makes sure the root path exists and loads the current members. Blocks at most about
   * twice the connection timeout.
   *
   * @throws IllegalStateException if ZooKeeper cannot be reached in time
   */
  public void start() {
    client.getConnectionStateListenable().addListener((c, state) -> onConnectionState(state));
    client.start();
    try {
      long timeout = config.connectionTimeout().toMillis();
      if (!client.blockUntilConnected(Math.toIntExact(timeout), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(
            "no ZooKeeper connection to "
                + config.zookeeper()
                + " within "
                + config.connectionTimeout());
      }
      connected = true;
      ensureRoot();
      cache
          .listenable()
          .addListener(
              CuratorCacheListener.builder()
                  .forAll((type, before, after) -> publish())
                  .forInitialized(
                      () -> {
                        cacheReady = true;
                        initialized.countDown();
                        publish();
                      })
                  .build());
      cache.start();
      if (!initialized.await(timeout, TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(
            "members under " + config.root() + " not loaded within " + config.connectionTimeout());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting to ZooKeeper", e);
    }
    LOG.info(
        "{} connected to ZooKeeper {}, {} member(s) under {}",
        logPrefix,
        config.zookeeper(),
        snapshot().members().size(),
        config.root());
  }

  private void ensureRoot() {
    try {
      // Persistent, not container nodes: a container disappears when its last member leaves.
      client.create().creatingParentsIfNeeded().forPath(config.root());
    } catch (KeeperException.NodeExistsException e) {
      // another node was first
    } catch (Exception e) {
      throw new IllegalStateException("cannot create " + config.root() + " in ZooKeeper", e);
    }
  }

  /**
   * Registers this node: creates its ephemeral znode (and keeps it, across sessions, until {@link
   * #deregister()}). Does not wait; the snapshot says when it is {@code registered}.
   */
  public synchronized void register(Member self) {
    if (closed || registration != null) {
      throw new IllegalStateException(closed ? "closed" : "already registered");
    }
    PersistentNode node =
        new PersistentNode(client, CreateMode.EPHEMERAL, false, path(self.nodeId()), self.toJson());
    node.getListenable()
        .addListener(
            path -> {
              createdInSession = currentSession();
              publish();
            });
    node.start();
    registration = node;
    LOG.info("{} registering as {}", logPrefix, self);
  }

  /** Deletes this node's znode: the other nodes take its devices after their rebalance delay. */
  public synchronized void deregister() {
    PersistentNode node = registration;
    registration = null;
    createdInSession = 0;
    if (node != null) {
      try {
        node.close();
        LOG.info("{} deregistered", logPrefix);
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "{} deregistering failed (the znode expires with the session): {}",
            logPrefix,
            e.toString());
      }
    }
  }

  /** The current view: members in the cache, connection state, own registration. */
  public MembershipSnapshot snapshot() {
    Map<String, Member> members = new HashMap<>();
    boolean registered = false;
    long session = currentSession();
    String prefix = config.root() + "/";
    for (ChildData child : (Iterable<ChildData>) cache.stream()::iterator) {
      String path = child.getPath();
      if (!path.startsWith(prefix) || path.indexOf('/', prefix.length()) >= 0) {
        continue; // the root itself, or something deeper that is not ours
      }
      String nodeId = path.substring(prefix.length());
      Optional<Member> member = parse(child, nodeId);
      if (member.isEmpty()) {
        continue;
      }
      members.put(nodeId, member.get());
      if (nodeId.equals(config.nodeId())
          && session != 0
          && registration != null
          && (createdInSession == session
              || (child.getStat() != null && child.getStat().getEphemeralOwner() == session))) {
        registered = true;
      }
    }
    return new MembershipSnapshot(members, connected, registered);
  }

  private Optional<Member> parse(ChildData child, String nodeId) {
    byte[] data = child.getData();
    if (data == null || data.length == 0) {
      return Optional.empty(); // being created
    }
    try {
      Member member = Member.fromJson(data);
      if (!member.nodeId().equals(nodeId)) {
        LOG.warn(
            "{} znode {} carries node id {}; ignored", logPrefix, child.getPath(), member.nodeId());
        return Optional.empty();
      }
      return Optional.of(member);
    } catch (IllegalArgumentException e) {
      LOG.warn(
          "{} znode {} is not a member: {}; ignored", logPrefix, child.getPath(), e.getMessage());
      return Optional.empty();
    }
  }

  private long currentSession() {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      return 0;
    }
  }

  private void onConnectionState(ConnectionState state) {
    boolean up = state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED;
    if (up) {
      LOG.info("{} ZooKeeper connection {}", logPrefix, state);
    } else {
      LOG.warn(
          "{} ZooKeeper connection {}: this node stops claiming its devices", logPrefix, state);
    }
    connected = up;
    publish();
  }

  // Synchronized: snapshots reach the listener in the order they were taken, whichever Curator
  // thread (connection state, cache) triggered them.
  private void publish() {
    synchronized (publishLock) {
      if (!cacheReady || closed) {
        return;
      }
      try {
        listener.accept(snapshot());
      } catch (RuntimeException e) {
        LOG.error("{} membership listener failed", logPrefix, e);
      }
    }
  }

  private String path(String nodeId) {
    return config.root() + "/" + nodeId;
  }

  /** The Curator client, for tests that inject session expiry. */
  public CuratorFramework client() {
    return client;
  }

  /** Deregisters, stops watching and closes the ZooKeeper session. */
  @Override
  public void close() {
    deregister();
    closed = true;
    cache.close();
    client.close();
  }
}
