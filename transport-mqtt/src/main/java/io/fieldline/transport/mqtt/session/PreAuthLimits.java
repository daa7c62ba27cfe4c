package io.fieldline.transport.mqtt.session;

import com.github.benmanes.caffeine.cache.Cache;
import io.fieldline.common.ratelimit.BoundedTables;
import io.fieldline.common.ratelimit.Rate;
import io.fieldline.common.ratelimit.TokenBuckets;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.github.bucket4j.Bucket;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The limits a connection meets before it is authenticated (bounds enforced where the resource is
 * spent: at accept, and at the token lookup):
 *
 * <ul>
 *   <li>{@code max-connections} open connections, of which at most {@code
 *       max-unauthenticated-connections} have not been accepted yet (CONNACK 0x00), so sockets that
 *       never authenticate cannot lock authenticated devices out;
 *   <li>per source address, a token bucket of new connections ({@code per-address-connection-rate}
 *       per second, {@code per-address-connection-burst} at once);
 *   <li>per source address, a budget of failed authentications ({@code
 *       per-address-failed-auth-burst}, one regained every {@code per-address-failed-auth-refill});
 *       with none left, CONNECT is refused without looking the token up.
 * </ul>
 *
 * <p>Both per-address budgets are token buckets and the per-address table a bounded Caffeine table
 * ({@code common.ratelimit}): it holds an address while one of its budgets is not full, at most
 * {@code per-address-table-size} of them (when full, Caffeine forgets one: its budgets start full
 * again if it comes back).
 *
 * <p>Thread-safe: every event loop admits and releases through the same instance.
 */
public final class PreAuthLimits {

  /** The outcome of {@link #admit}. */
  public enum Admission {
    ADMITTED(null),
    /** {@code max-connections} reached. */
    CONNECTION_LIMIT(CloseReason.CONNECTION_LIMIT),
    /** {@code max-unauthenticated-connections} reached. */
    UNAUTHENTICATED_LIMIT(CloseReason.UNAUTHENTICATED_LIMIT),
    /** The source address opened connections faster than its rate. */
    CONNECTION_RATE(CloseReason.CONNECTION_RATE);

    private final @Nullable CloseReason reason;

    Admission(@Nullable CloseReason reason) {
      this.reason = reason;
    }

    /** Why a refused connection is closed; null for {@link #ADMITTED}. */
    public @Nullable CloseReason reason() {
      return reason;
    }
  }

  /** One admitted connection's share of the counts; released once, when the channel closes. */
  private static final class Ticket {
    final AtomicBoolean unauthenticated = new AtomicBoolean(true);
  }

  private static final AttributeKey<Ticket> TICKET = AttributeKey.valueOf("fieldline.preAuth");

  private final int maxConnections;
  private final int maxUnauthenticated;
  // Null when that budget is off (a rate or burst of 0).
  private final @Nullable Rate connectionRate;
  private final @Nullable Rate failedAuthRate;
  private final LongSupplier nanoClock;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger unauthenticated = new AtomicInteger();
  // An address is held while one of its budgets is not full. Its buckets are changed only inside
  // the table's compute for that address.
  private final Cache<InetAddress, Budgets> addresses;

  public PreAuthLimits(MqttTransportConfig config) {
    this(config, System::nanoTime);
  }

  /** With a test clock ({@code nanoClock} as {@link System#nanoTime()}). */
  public PreAuthLimits(MqttTransportConfig config, LongSupplier nanoClock) {
    this.maxConnections = config.maxConnections();
    this.maxUnauthenticated = config.maxUnauthenticatedConnections();
    this.connectionRate =
        config.perAddressConnectionRate() > 0
            ? Rate.perSecond(config.perAddressConnectionRate(), config.perAddressConnectionBurst())
            : null;
    this.failedAuthRate =
        config.perAddressFailedAuthBurst() > 0
            ? new Rate(config.perAddressFailedAuthBurst(), config.perAddressFailedAuthRefill())
            : null;
    this.nanoClock = nanoClock;
    this.addresses =
        BoundedTables.idleAfter(config.perAddressTableSize(), nanoClock, Budgets::idleInNanos);
  }

  /**
   * A new channel: admitted (counted until it closes) or refused (the caller closes it at once).
   * Called as the channel is initialised, before anything is read.
   */
  public Admission admit(Channel channel) {
    if (open.incrementAndGet() > maxConnections) {
      open.decrementAndGet();
      return Admission.CONNECTION_LIMIT;
    }
    if (unauthenticated.incrementAndGet() > maxUnauthenticated) {
      unauthenticated.decrementAndGet();
      open.decrementAndGet();
      return Admission.UNAUTHENTICATED_LIMIT;
    }
    InetAddress address = address(channel.remoteAddress());
    if (address != null && connectionRate != null && !takeConnection(address)) {
      unauthenticated.decrementAndGet();
      open.decrementAndGet();
      return Admission.CONNECTION_RATE;
    }
    Ticket ticket = new Ticket();
    channel.attr(TICKET).set(ticket);
    channel.closeFuture().addListener(closed -> release(ticket));
    return Admission.ADMITTED;
  }

  /** The channel's CONNECT was accepted: it no longer counts as unauthenticated. */
  public void authenticated(Channel channel) {
    Ticket ticket = channel.attr(TICKET).get();
    if (ticket != null && ticket.unauthenticated.compareAndSet(true, false)) {
      unauthenticated.decrementAndGet();
    }
  }

  /** Whether the channel's source address may still have its token looked up. */
  public boolean mayAuthenticate(Channel channel) {
    InetAddress address = address(channel.remoteAddress());
    if (address == null || failedAuthRate == null) {
      return true;
    }
    boolean[] may = {true};
    addresses
        .asMap()
        .computeIfPresent(
            address,
            (a, budgets) -> {
              may[0] =
                  budgets.failedAuth == null || TokenBuckets.nanosUntilOne(budgets.failedAuth) == 0;
              return budgets;
            });
    return may[0];
  }

  /** The channel's CONNECT carried no token or an unknown one: one failure from its budget. */
  public void authenticationFailed(Channel channel) {
    InetAddress address = address(channel.remoteAddress());
    if (address == null || failedAuthRate == null) {
      return;
    }
    addresses
        .asMap()
        .compute(
            address,
            (a, budgets) -> {
              Budgets b = budgets == null ? new Budgets() : budgets;
              // None left: nothing more to take (the budget does not go below empty).
              if (b.failedAuth != null) {
                b.failedAuth.tryConsume(1);
              }
              return b;
            });
  }

  /** Open connections not yet authenticated. */
  public int unauthenticated() {
    return unauthenticated.get();
  }

  /** Open connections. */
  public int open() {
    return open.get();
  }

  /** Source addresses currently tracked (at most {@code per-address-table-size}). */
  public int trackedAddresses() {
    return BoundedTables.size(addresses);
  }

  private boolean takeConnection(InetAddress address) {
    boolean[] taken = {true};
    addresses
        .asMap()
        .compute(
            address,
            (a, budgets) -> {
              Budgets b = budgets == null ? new Budgets() : budgets;
              if (b.connections != null) {
                taken[0] = b.connections.tryConsume(1);
              }
              return b;
            });
    return taken[0];
  }

  private void release(Ticket ticket) {
    if (ticket.unauthenticated.compareAndSet(true, false)) {
      unauthenticated.decrementAndGet();
    }
    open.decrementAndGet();
  }

  private static @Nullable InetAddress address(@Nullable SocketAddress remote) {
    return remote instanceof InetSocketAddress inet ? inet.getAddress() : null;
  }

  /** Both budgets of one source address (null: that budget is off). Guarded by the table. */
  private final class Budgets {
    final @Nullable Bucket connections =
        connectionRate == null ? null : TokenBuckets.confined(connectionRate, nanoClock);
    final @Nullable Bucket failedAuth =
        failedAuthRate == null ? null : TokenBuckets.confined(failedAuthRate, nanoClock);

    /** How long until forgetting this address would change nothing (both budgets full). */
    long idleInNanos() {
      long idle = 0;
      if (connections != null && connectionRate != null) {
        idle = TokenBuckets.nanosUntilFull(connections, connectionRate);
      }
      if (failedAuth != null && failedAuthRate != null) {
        idle = Math.max(idle, TokenBuckets.nanosUntilFull(failedAuth, failedAuthRate));
      }
      return idle;
    }
  }
}
