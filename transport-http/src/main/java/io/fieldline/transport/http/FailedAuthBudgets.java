package io.fieldline.transport.http;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Per source address, a budget of requests with an unknown access token: {@code burst} in a row,
 * one regained every {@code refill}. With none left, the address's requests are refused before
 * their token is looked up, so that guessing tokens costs the guesser time instead of costing the
 * registry reads (a guessed token is never in the registry's cache). The HTTP counterpart of the
 * MQTT transport's per-address failed-authentication budget.
 *
 * <p>Counted as the generic cell rate algorithm counts (in whole nanoseconds, so waits are exact):
 * each failure moves the address's "full again at" time one {@code refill} ahead; the address has a
 * failure left while that time is less than {@code burst} refills ahead.
 *
 * <p>The table holds at most {@code maxAddresses} addresses, each only while its budget is not
 * full: {@link #sweep} forgets those refilled since; an address that finds the table full first
 * sweeps it, then takes the place of another (whose budget starts full again if it comes back).
 *
 * <p>Thread-safe: each entry is read and changed only inside the map's {@code compute} for its
 * address.
 */
final class FailedAuthBudgets {

  /** When an address's budget is full again (nano clock). Replaced, never changed in place. */
  private record FullAt(long nanos) {}

  private final ConcurrentHashMap<InetAddress, FullAt> addresses = new ConcurrentHashMap<>();
  private final int burst;
  private final long refillNanos;
  private final long toleranceNanos;
  private final int maxAddresses;
  private final LongSupplier nanoClock;

  /**
   * @param burst failures an address may have in a row; 0 = no limit
   * @param refill time in which an address regains one failure
   * @param maxAddresses addresses remembered at most
   * @param nanoClock as {@link System#nanoTime()}
   */
  FailedAuthBudgets(int burst, Duration refill, int maxAddresses, LongSupplier nanoClock) {
    this.burst = burst;
    this.refillNanos = refill.toNanos();
    this.toleranceNanos = refillNanos * Math.max(0, burst - 1);
    this.maxAddresses = maxAddresses;
    this.nanoClock = nanoClock;
  }

  /** Zero when {@code address} may have a token looked up, else how long until it may. */
  Duration wait(InetAddress address) {
    FullAt full = burst == 0 ? null : addresses.get(address);
    if (full == null) {
      return Duration.ZERO;
    }
    long ahead = full.nanos() - nanoClock.getAsLong() - toleranceNanos;
    return ahead > 0 ? Duration.ofNanos(ahead) : Duration.ZERO;
  }

  /** A request from {@code address} carried an unknown token: one failure from its budget. */
  void failed(InetAddress address) {
    if (burst == 0) {
      return;
    }
    long now = nanoClock.getAsLong();
    if (!addresses.containsKey(address) && addresses.size() >= maxAddresses) {
      makeRoom();
    }
    addresses.compute(
        address,
        (key, full) -> {
          long from = full == null || full.nanos() - now < 0 ? now : full.nanos();
          return new FullAt(from + refillNanos);
        });
  }

  /** Forgets the addresses whose budget refilled; called now and then. */
  void sweep() {
    long now = nanoClock.getAsLong();
    for (InetAddress address : addresses.keySet()) {
      addresses.computeIfPresent(address, (key, full) -> full.nanos() - now <= 0 ? null : full);
    }
  }

  /** Addresses remembered now. */
  int tracked() {
    return addresses.size();
  }

  private void makeRoom() {
    sweep();
    Iterator<InetAddress> any = addresses.keySet().iterator();
    while (addresses.size() >= maxAddresses && any.hasNext()) {
      addresses.remove(any.next());
    }
  }
}
