package io.fieldline.transport.http;

import io.fieldline.common.ratelimit.KeyedBuckets;
import io.fieldline.common.ratelimit.Rate;
import java.net.InetAddress;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Per source address, a budget of requests with an unknown access token: {@code burst} in a row,
 * one regained every {@code refill}. With none left, the address's requests are refused before
 * their token is looked up, so that guessing tokens costs the guesser time instead of costing the
 * registry reads (a guessed token is never in the registry's cache). The HTTP counterpart of the
 * MQTT transport's per-address failed-authentication budget.
 *
 * <p>A token bucket per address ({@code common.ratelimit}, Bucket4j, exact in nanoseconds): each
 * failure takes a token, even when none is left (failures that raced past the check still count);
 * the address may have a token looked up while it holds one.
 *
 * <p>The table holds at most {@code maxAddresses} addresses, each only while its budget is not
 * full: an address is forgotten once it refilled, or when the table is full and Caffeine picks it
 * (its budget starts full again if it comes back).
 *
 * <p>Thread-safe: each entry is read and changed only inside the table's {@code compute} for its
 * address.
 */
final class FailedAuthBudgets {

  // Null when there is no limit (a burst of 0).
  private final @Nullable KeyedBuckets<InetAddress> addresses;

  /**
   * @param burst failures an address may have in a row; 0 = no limit
   * @param refill time in which an address regains one failure
   * @param maxAddresses addresses remembered at most
   * @param nanoClock as {@link System#nanoTime()}
   */
  FailedAuthBudgets(int burst, Duration refill, int maxAddresses, LongSupplier nanoClock) {
    this.addresses =
        burst == 0 ? null : new KeyedBuckets<>(new Rate(burst, refill), maxAddresses, nanoClock);
  }

  /** Zero when {@code address} may have a token looked up, else how long until it may. */
  Duration wait(InetAddress address) {
    long wait = addresses == null ? 0 : addresses.nanosUntilToken(address);
    return wait > 0 ? Duration.ofNanos(wait) : Duration.ZERO;
  }

  /** A request from {@code address} carried an unknown token: one failure from its budget. */
  void failed(InetAddress address) {
    if (addresses != null) {
      addresses.take(address);
    }
  }

  /** Forgets the addresses whose budget refilled; called now and then. */
  void sweep() {
    if (addresses != null) {
      addresses.sweep();
    }
  }

  /** Addresses remembered now. */
  int tracked() {
    return addresses == null ? 0 : addresses.tracked();
  }
}
