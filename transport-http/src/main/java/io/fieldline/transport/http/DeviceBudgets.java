package io.fieldline.transport.http;

import io.fieldline.common.DeviceId;
import io.fieldline.transport.common.pacing.RequestPacer;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What each device may have going on this node through the HTTP device API, and what it has: its
 * uploads being stored, its waiting long polls (and the node's total of them), and its rate of
 * client-side RPC requests and attribute reads. A device is tracked only while it uses any of it:
 * its entry goes when nothing of it is left ({@link #sweep} removes those whose rate budget
 * refilled since), so the table holds at most the devices active in the last moments.
 *
 * <p>Rates are the device transports' one {@link RequestPacer} (the generic cell rate algorithm, as
 * the MQTT transport paces them). The MQTT transport slows a connection's reading down; an HTTP
 * request is refused instead (429 with the wait in {@code Retry-After}), which is how HTTP clients
 * expect to be slowed down.
 *
 * <p>Thread-safe: each entry is read and changed only inside the map's {@code compute} for its
 * device.
 */
final class DeviceBudgets {

  /** One device's use. Touched only inside {@code compute} for its key. */
  private final class Budget {
    int writes;
    int polls;
    final RequestPacer rpc;
    final RequestPacer reads;

    // The rate budgets start full at now: the nano clock has no fixed origin (it may be negative),
    // so 0 would be a time arbitrarily far in the past or the future.
    Budget(long now) {
      rpc = new RequestPacer(config.clientRpcRate(), config.clientRpcBurst(), now);
      reads = new RequestPacer(config.attributeReadRate(), config.attributeReadBurst(), now);
    }

    boolean idle(long now) {
      return writes == 0 && polls == 0 && rpc.idle(now) && reads.idle(now);
    }
  }

  /** The kinds of rate-limited request. */
  enum Rated {
    CLIENT_RPC,
    ATTRIBUTE_READ
  }

  private final ConcurrentHashMap<DeviceId, Budget> budgets = new ConcurrentHashMap<>();
  private final AtomicInteger polls = new AtomicInteger();
  private final ConcurrentHashMap<InetAddress, Integer> pollsPerAddress = new ConcurrentHashMap<>();
  private final DeviceApiConfig config;
  private final LongSupplier nanoClock;

  DeviceBudgets(DeviceApiConfig config, LongSupplier nanoClock) {
    this.config = config;
    this.nanoClock = nanoClock;
  }

  /** Takes one of the device's upload slots; false when it has as many as it may. */
  boolean startWrite(DeviceId device) {
    boolean[] started = {false};
    long now = nanoClock.getAsLong();
    budgets.compute(
        device,
        (id, budget) -> {
          Budget b = budget == null ? new Budget(now) : budget;
          if (b.writes < config.maxWritesPerDevice()) {
            b.writes++;
            started[0] = true;
          }
          return b.idle(now) ? null : b;
        });
    return started[0];
  }

  /** Gives back an upload slot taken by {@link #startWrite}. */
  void writeDone(DeviceId device) {
    long now = nanoClock.getAsLong();
    budgets.computeIfPresent(
        device,
        (id, b) -> {
          b.writes = Math.max(0, b.writes - 1);
          return b.idle(now) ? null : b;
        });
  }

  /** Takes a long-poll slot of the device and of the node (a poll without a source address). */
  @Nullable String startPoll(DeviceId device) {
    return startPoll(device, null);
  }

  /**
   * Takes a long-poll slot of the device, of its source address and of the node.
   *
   * @param address the TCP peer; null when unknown (no per-address slot taken)
   * @return null when taken, else why not (for the 429's message)
   */
  @Nullable String startPoll(DeviceId device, @Nullable InetAddress address) {
    if (polls.incrementAndGet() > config.maxPolls()) {
      polls.decrementAndGet();
      return "too many long polls waiting on this node (" + config.maxPolls() + ")";
    }
    if (address != null && config.maxPollsPerAddress() > 0) {
      if (pollsPerAddress.merge(address, 1, Integer::sum) > config.maxPollsPerAddress()) {
        addressPollDone(address);
        polls.decrementAndGet();
        return "too many long polls from this address (" + config.maxPollsPerAddress() + ")";
      }
    }
    boolean[] started = {false};
    long now = nanoClock.getAsLong();
    budgets.compute(
        device,
        (id, budget) -> {
          Budget b = budget == null ? new Budget(now) : budget;
          if (b.polls < config.maxPollsPerDevice()) {
            b.polls++;
            started[0] = true;
          }
          return b.idle(now) ? null : b;
        });
    if (!started[0]) {
      polls.decrementAndGet();
      if (address != null && config.maxPollsPerAddress() > 0) {
        addressPollDone(address);
      }
      return "too many long polls of this device (" + config.maxPollsPerDevice() + ")";
    }
    return null;
  }

  private void addressPollDone(InetAddress address) {
    pollsPerAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
  }

  /** Gives back a slot taken by {@link #startPoll(DeviceId)}. */
  void pollDone(DeviceId device) {
    pollDone(device, null);
  }

  /** Gives back a slot taken by {@link #startPoll(DeviceId, InetAddress)} with the same address. */
  void pollDone(DeviceId device, @Nullable InetAddress address) {
    if (address != null && config.maxPollsPerAddress() > 0) {
      addressPollDone(address);
    }
    long now = nanoClock.getAsLong();
    boolean[] released = {false};
    budgets.computeIfPresent(
        device,
        (id, b) -> {
          if (b.polls > 0) {
            b.polls--;
            released[0] = true;
          }
          return b.idle(now) ? null : b;
        });
    if (released[0]) {
      polls.decrementAndGet();
    }
  }

  /**
   * Counts one rate-limited request of the device.
   *
   * @return zero when it is within the rate and burst, else how long until one would be
   */
  Duration admit(DeviceId device, Rated kind) {
    int rate = kind == Rated.CLIENT_RPC ? config.clientRpcRate() : config.attributeReadRate();
    if (rate == 0) {
      return Duration.ZERO;
    }
    long now = nanoClock.getAsLong();
    Duration[] wait = {Duration.ZERO};
    budgets.compute(
        device,
        (id, budget) -> {
          Budget b = budget == null ? new Budget(now) : budget;
          wait[0] = (kind == Rated.CLIENT_RPC ? b.rpc : b.reads).admit(now);
          return b.idle(now) ? null : b;
        });
    return wait[0];
  }

  /** Forgets the devices that use nothing any more; called now and then. */
  void sweep() {
    long now = nanoClock.getAsLong();
    for (DeviceId device : budgets.keySet()) {
      budgets.computeIfPresent(device, (id, b) -> b.idle(now) ? null : b);
    }
  }

  /** Long polls waiting on this node (a gauge). */
  int polls() {
    return polls.get();
  }

  /** Devices tracked now (for tests). */
  int tracked() {
    return budgets.size();
  }
}
