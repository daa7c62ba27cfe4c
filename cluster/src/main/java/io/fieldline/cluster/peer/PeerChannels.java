package io.fieldline.cluster.peer;

import io.fieldline.cluster.Member;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One gRPC channel per peer node, shared by forwarding, takeover, revocation and device events. A
 * channel is created on first use for the peer's advertised gRPC address and replaced if the peer
 * re-registers elsewhere; {@link #retainOnly} closes the channels of peers that left (gracefully:
 * calls in progress finish or hit their deadline, then the channel is forced shut).
 *
 * <p>Channels keep the connection checked with HTTP/2 keep-alive pings while calls are open, so a
 * peer that vanished without closing its sockets is noticed in seconds, not at the TCP timeout.
 * Thread-safe.
 */
public final class PeerChannels implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PeerChannels.class);

  /** Keep-alive ping interval on open calls; the server permits pings this often. */
  public static final Duration KEEP_ALIVE = Duration.ofSeconds(10);

  /** How long a ping may go unanswered before the connection is considered dead. */
  public static final Duration KEEP_ALIVE_TIMEOUT = Duration.ofSeconds(5);

  private record Peer(Member member, ManagedChannel channel) {}

  private final BiFunction<String, Member, ManagedChannel> channelFactory;
  private final ScheduledExecutorService timer;
  private final Duration closeGrace;
  private final Map<String, Peer> peers = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * Channels over TCP (Netty, shaded) with keep-alive.
   *
   * @param executor runs gRPC callbacks (bounded, named threads)
   * @param timer forces channels shut after {@code closeGrace}
   * @param closeGrace how long calls on a departed peer's channel may still finish
   */
  public static PeerChannels tcp(
      Executor executor, ScheduledExecutorService timer, Duration closeGrace) {
    return new PeerChannels(
        (nodeId, member) ->
            NettyChannelBuilder.forAddress(member.grpcHost(), member.grpcPort())
                .usePlaintext()
                .executor(executor)
                .keepAliveTime(KEEP_ALIVE.toMillis(), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(KEEP_ALIVE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .keepAliveWithoutCalls(false)
                .build(),
        timer,
        closeGrace);
  }

  /** Channels from a factory (tests: in-process channels). */
  public PeerChannels(
      BiFunction<String, Member, ManagedChannel> channelFactory,
      ScheduledExecutorService timer,
      Duration closeGrace) {
    this.channelFactory = channelFactory;
    this.timer = timer;
    this.closeGrace = closeGrace;
  }

  /**
   * The channel to {@code member}, created if needed.
   *
   * @throws IllegalStateException once closed
   */
  public ManagedChannel channel(Member member) {
    if (closed) {
      throw new IllegalStateException("peer channels closed");
    }
    Peer peer =
        peers.compute(
            member.nodeId(),
            (id, existing) -> {
              if (existing != null && existing.member().grpc().equals(member.grpc())) {
                return existing;
              }
              if (existing != null) {
                LOG.info(
                    "[peer|{}] moved from {} to {}", id, existing.member().grpc(), member.grpc());
                retire(existing);
              }
              return new Peer(member, channelFactory.apply(id, member));
            });
    return peer.channel();
  }

  /** Closes the channels of every peer not in {@code nodeIds}. */
  public void retainOnly(Collection<String> nodeIds) {
    Set<String> keep = new HashSet<>(nodeIds);
    for (String id : Set.copyOf(peers.keySet())) {
      if (!keep.contains(id)) {
        Peer removed = peers.remove(id);
        if (removed != null) {
          LOG.info("[peer|{}] left; closing its channel", id);
          retire(removed);
        }
      }
    }
  }

  private void retire(Peer peer) {
    peer.channel().shutdown();
    if (!timer.isShutdown()) {
      timer.schedule(peer.channel()::shutdownNow, closeGrace.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** Forces every channel shut and waits (at most 2 s) for their calls to be cancelled. */
  @Override
  public void close() {
    closed = true;
    List<ManagedChannel> closing = new ArrayList<>();
    for (Peer peer : peers.values()) {
      closing.add(peer.channel().shutdownNow());
    }
    peers.clear();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    try {
      for (ManagedChannel channel : closing) {
        channel.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
