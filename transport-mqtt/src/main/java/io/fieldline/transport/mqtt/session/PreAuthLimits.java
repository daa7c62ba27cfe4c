package io.fieldline.transport.mqtt.session;

import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
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
 * <p>The per-address table holds at most {@code per-address-table-size} addresses; the least
 * recently seen is forgotten first (its budgets start full again if it comes back).
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
  private final double connectionRatePerNano;
  private final int connectionBurst;
  private final int failedAuthBurst;
  private final double failedAuthPerNano;
  private final int tableSize;
  private final LongSupplier nanoClock;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger unauthenticated = new AtomicInteger();
  // Access-ordered: the least recently seen address is evicted first. Guarded by itself.
  private final LinkedHashMap<InetAddress, Budgets> addresses;

  public PreAuthLimits(MqttTransportConfig config) {
    this(config, System::nanoTime);
  }

  /** With a test clock ({@code nanoClock} as {@link System#nanoTime()}). */
  public PreAuthLimits(MqttTransportConfig config, LongSupplier nanoClock) {
    this.maxConnections = config.maxConnections();
    this.maxUnauthenticated = config.maxUnauthenticatedConnections();
    this.connectionRatePerNano = config.perAddressConnectionRate() / 1e9;
    this.connectionBurst = config.perAddressConnectionBurst();
    this.failedAuthBurst = config.perAddressFailedAuthBurst();
    this.failedAuthPerNano = 1.0 / config.perAddressFailedAuthRefill().toNanos();
    this.tableSize = config.perAddressTableSize();
    this.nanoClock = nanoClock;
    this.addresses =
        new LinkedHashMap<>(64, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<InetAddress, Budgets> eldest) {
            return size() > tableSize;
          }
        };
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
    if (address != null && connectionRatePerNano > 0 && !takeConnection(address)) {
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
    if (address == null || failedAuthBurst == 0) {
      return true;
    }
    synchronized (addresses) {
      Budgets budgets = addresses.get(address);
      return budgets == null || budgets.failedAuth(nanoClock.getAsLong()) >= 1;
    }
  }

  /** The channel's CONNECT carried no token or an unknown one: one failure from its budget. */
  public void authenticationFailed(Channel channel) {
    InetAddress address = address(channel.remoteAddress());
    if (address == null || failedAuthBurst == 0) {
      return;
    }
    long now = nanoClock.getAsLong();
    synchronized (addresses) {
      Budgets budgets = addresses.computeIfAbsent(address, a -> new Budgets(now));
      budgets.failedAuthTokens = Math.max(0, budgets.failedAuth(now) - 1);
    }
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
    synchronized (addresses) {
      return addresses.size();
    }
  }

  private boolean takeConnection(InetAddress address) {
    long now = nanoClock.getAsLong();
    synchronized (addresses) {
      Budgets budgets = addresses.computeIfAbsent(address, a -> new Budgets(now));
      double tokens =
          Math.min(
              connectionBurst,
              budgets.connectionTokens + (now - budgets.connectionStamp) * connectionRatePerNano);
      budgets.connectionStamp = now;
      if (tokens < 1) {
        budgets.connectionTokens = tokens;
        return false;
      }
      budgets.connectionTokens = tokens - 1;
      return true;
    }
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

  /** Both budgets of one source address. Guarded by the table. */
  private final class Budgets {
    double connectionTokens = connectionBurst;
    long connectionStamp;
    double failedAuthTokens = failedAuthBurst;
    long failedAuthStamp;

    Budgets(long now) {
      connectionStamp = now;
      failedAuthStamp = now;
    }

    /** The failed-auth budget at {@code now}, refilled since the last look. */
    double failedAuth(long now) {
      failedAuthTokens =
          Math.min(failedAuthBurst, failedAuthTokens + (now - failedAuthStamp) * failedAuthPerNano);
      failedAuthStamp = now;
      return failedAuthTokens;
    }
  }
}
