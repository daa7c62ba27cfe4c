package io.fieldline.fleet.provision;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;
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
 * token. The per-address table keeps at most {@code max-tracked-addresses} addresses, the least
 * recently seen forgotten first (its budgets start full again). Requests whose address is unknown
 * share one entry.
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
  private final double perAddressPerNano;
  private final double totalPerNano;
  private final long windowNanos;
  // Access-ordered: the least recently seen address is evicted first. Guarded by this.
  private final LinkedHashMap<String, Budget> addresses;
  private double totalTokens;
  private long totalStamp;

  ProvisionThrottle(ProvisionConfig config, LongSupplier nanoClock) {
    this.config = config;
    this.nanoClock = nanoClock;
    this.perAddressPerNano = config.perAddressRate() / 1e9;
    this.totalPerNano = config.totalRate() / 1e9;
    this.windowNanos = config.failureWindow().toNanos();
    this.totalTokens = config.totalBurst();
    this.totalStamp = nanoClock.getAsLong();
    int max = config.maxTrackedAddresses();
    this.addresses =
        new LinkedHashMap<>(64, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Budget> eldest) {
            return size() > max;
          }
        };
  }

  /** Whether a request from {@code source} may be answered now; an admitted one takes a token. */
  synchronized Admission admit(@Nullable InetAddress source) {
    long now = nanoClock.getAsLong();
    Budget budget = addresses.computeIfAbsent(key(source), k -> new Budget(now));
    if (budget.lockedOut(now)) {
      return Admission.LOCKED_OUT;
    }
    double own =
        Math.min(
            config.perAddressBurst(), budget.tokens + (now - budget.stamp) * perAddressPerNano);
    budget.stamp = now;
    budget.tokens = own;
    if (own < 1) {
      return Admission.ADDRESS_RATE;
    }
    double total = Math.min(config.totalBurst(), totalTokens + (now - totalStamp) * totalPerNano);
    totalStamp = now;
    totalTokens = total;
    if (total < 1) {
      return Admission.TOTAL_RATE;
    }
    budget.tokens = own - 1;
    totalTokens = total - 1;
    return Admission.ADMITTED;
  }

  /** A request from {@code source} was answered NOT_FOUND. */
  synchronized void failed(@Nullable InetAddress source) {
    long now = nanoClock.getAsLong();
    Budget budget = addresses.computeIfAbsent(key(source), k -> new Budget(now));
    if (budget.failures == 0 || now - budget.windowStart >= windowNanos) {
      budget.failures = 0;
      budget.windowStart = now;
    }
    budget.failures++;
  }

  /** Addresses remembered now (for the gauge). */
  synchronized int tracked() {
    return addresses.size();
  }

  private static String key(@Nullable InetAddress source) {
    return source == null ? "?" : source.getHostAddress();
  }

  /** One address's budgets. Guarded by the throttle. */
  private final class Budget {
    double tokens = config.perAddressBurst();
    long stamp;
    int failures;
    long windowStart;

    Budget(long now) {
      stamp = now;
    }

    boolean lockedOut(long now) {
      if (failures > 0 && now - windowStart >= windowNanos) {
        failures = 0;
      }
      return failures >= config.maxFailuresPerAddress();
    }
  }
}
