package io.fieldline.fleet.provision;

import com.github.benmanes.caffeine.cache.Cache;
import io.fieldline.common.ratelimit.BoundedTables;
import io.fieldline.common.ratelimit.Rate;
import io.fieldline.common.ratelimit.TokenBuckets;
import io.github.bucket4j.Bucket;
import java.net.InetAddress;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The rate limits of provisioning, which are also what keeps a provision secret from being guessed:
 *
 * <ul>
 *   <li>per source address, a token bucket of requests ({@code per-address-rate} per second, {@code
 *       per-address-burst} at once);
 *   <li>for this node, one token bucket of all requests ({@code total-rate}, {@code total-burst}),
 *       so many addresses together cannot go faster either;
 *   <li>per source address, its requests answered NOT_FOUND (an unknown key, a wrong secret) in a
 *       fixed window starting at the first one ({@code failure-window}): at {@code
 *       max-failures-per-address} the address is refused until the window ends, as the REST login
 *       throttle does for passwords.
 * </ul>
 *
 * A request is checked against all three before anything is looked up; a refused one takes no
 * token. The buckets are Bucket4j's and the per-address table is Caffeine's ({@code
 * common.ratelimit}): it keeps an address while its bucket is not full or its failure window is
 * open, at most {@code max-tracked-addresses} of them (when full, Caffeine forgets one: its budgets
 * start full again). Requests whose address is unknown share one entry.
 *
 * <p>Thread-safe: every caller (MQTT event loops, HTTP dispatchers) goes through one instance; each
 * method is one short critical section.
 */
final class ProvisionThrottle {

  /** The outcome of {@link #admit}. */
  enum Admission {
    ADMITTED,
    /** The address sent requests faster than its rate. */
    ADDRESS_RATE,
    /** This node answers requests at its total rate. */
    TOTAL_RATE,
    /** The address had too many requests answered NOT_FOUND in the current window. */
    LOCKED_OUT
  }

  private final ProvisionConfig config;
  private final LongSupplier nanoClock;
  private final Rate perAddress;
  private final long windowNanos;
  // One entry per address while it is not idle (budget full, no failure window open). Changed
  // only inside compute, under this throttle's lock (the buckets are not thread-safe themselves).
  private final Cache<String, Budget> addresses;
  private final Bucket total;

  ProvisionThrottle(ProvisionConfig config, LongSupplier nanoClock) {
    this.config = config;
    this.nanoClock = nanoClock;
    this.perAddress = Rate.perSecond(config.perAddressRate(), config.perAddressBurst());
    this.windowNanos = config.failureWindow().toNanos();
    this.total =
        TokenBuckets.confined(Rate.perSecond(config.totalRate(), config.totalBurst()), nanoClock);
    this.addresses =
        BoundedTables.idleAfter(config.maxTrackedAddresses(), nanoClock, Budget::idleInNanos);
  }

  /** Whether a request from {@code source} may be answered now; an admitted one takes a token. */
  synchronized Admission admit(@Nullable InetAddress source) {
    long now = nanoClock.getAsLong();
    Admission[] admission = {Admission.ADMITTED};
    addresses
        .asMap()
        .compute(
            key(source),
            (k, budget) -> {
              Budget b = budget == null ? new Budget() : budget;
              admission[0] = b.admit(now);
              return b;
            });
    return admission[0];
  }

  /** A request from {@code source} was answered NOT_FOUND. */
  synchronized void failed(@Nullable InetAddress source) {
    long now = nanoClock.getAsLong();
    addresses
        .asMap()
        .compute(
            key(source),
            (k, budget) -> {
              Budget b = budget == null ? new Budget() : budget;
              if (b.failures == 0 || now - b.windowStart >= windowNanos) {
                b.failures = 0;
                b.windowStart = now;
              }
              b.failures++;
              return b;
            });
  }

  /** Addresses remembered now (for the gauge). */
  synchronized int tracked() {
    return BoundedTables.size(addresses);
  }

  private static String key(@Nullable InetAddress source) {
    return source == null ? "?" : source.getHostAddress();
  }

  /** One address's budgets. Guarded by the throttle. */
  private final class Budget {
    final Bucket tokens = TokenBuckets.confined(perAddress, nanoClock);
    int failures;
    long windowStart;

    Admission admit(long now) {
      if (lockedOut(now)) {
        return Admission.LOCKED_OUT;
      }
      if (TokenBuckets.nanosUntilOne(tokens) > 0) {
        return Admission.ADDRESS_RATE;
      }
      if (!total.tryConsume(1)) {
        return Admission.TOTAL_RATE;
      }
      tokens.tryConsume(1);
      return Admission.ADMITTED;
    }

    boolean lockedOut(long now) {
      if (failures > 0 && now - windowStart >= windowNanos) {
        failures = 0;
      }
      return failures >= config.maxFailuresPerAddress();
    }

    /** How long until forgetting this address would change nothing. */
    long idleInNanos() {
      long window = failures == 0 ? 0 : windowStart + windowNanos - nanoClock.getAsLong();
      return Math.max(window, TokenBuckets.nanosUntilFull(tokens, perAddress));
    }
  }
}
