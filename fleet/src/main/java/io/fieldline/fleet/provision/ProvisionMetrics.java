package io.fieldline.fleet.provision;

import io.fieldline.common.log.LogThrottles;
import io.fieldline.common.provision.ProvisionStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Provisioning's metric names and meters, and its refusal log: {@code
 * fieldline.provision.requests{status}} for every answer, {@code
 * fieldline.provision.refused{reason}} for every refusal, {@code fieldline.provision.creations}
 * (devices created; not {@code ...created}, a suffix Prometheus reserves), and the throttle's
 * {@code fieldline.provision.addresses.tracked}. Each refusal is logged, one line per reason at
 * most every 10 s (a fleet retrying a wrong secret must not fill the disk): WARN for storage
 * failures, INFO for the rest. A line names the source address and the profile key's owner never;
 * no secret, password or token is ever logged. Thread-safe.
 */
public final class ProvisionMetrics {

  public static final String REQUESTS = "fieldline.provision.requests";
  public static final String REFUSED = "fieldline.provision.refused";
  public static final String CREATIONS = "fieldline.provision.creations";
  public static final String ADDRESSES_TRACKED = "fieldline.provision.addresses.tracked";

  private static final Logger LOG = LoggerFactory.getLogger(ProvisionMetrics.class);

  /** Why a request was refused; the {@code reason} tag. */
  public enum Refusal {
    /** Unknown key, wrong secret, provisioning disabled, key or secret missing: NOT_FOUND. */
    NOT_FOUND,
    /** Over the per-address or the total rate. */
    RATE_LIMITED,
    /** The address had too many NOT_FOUND answers in the current window. */
    LOCKED_OUT,
    /** The payload is larger than {@code max-request-size}. */
    TOO_LARGE,
    /** The payload is not a JSON object of strings. */
    MALFORMED,
    /** The device name is empty or breaks the naming rules. */
    BAD_NAME,
    /** The credential asked for is not valid. */
    BAD_CREDENTIALS,
    /** ALLOW_CREATE_NEW_DEVICES: a device already has the name. */
    DEVICE_EXISTS,
    /** CHECK_PRE_PROVISIONED_DEVICES: no device of that name and profile. */
    NOT_PRE_PROVISIONED,
    /** The name or the credential was taken by another device meanwhile, or is taken. */
    CONFLICT,
    /** Storage failed or timed out. */
    STORAGE
  }

  private final Map<ProvisionStatus, Counter> requests = new EnumMap<>(ProvisionStatus.class);
  private final Map<Refusal, Counter> refused = new EnumMap<>(Refusal.class);
  private final LogThrottles<Refusal> logs = new LogThrottles<>(Refusal.class);
  private final Counter created;

  ProvisionMetrics(MeterRegistry registry, ProvisionThrottle throttle) {
    for (ProvisionStatus status : ProvisionStatus.values()) {
      requests.put(
          status,
          Counter.builder(REQUESTS)
              .description("Provisioning requests answered, by status")
              .tag("status", status.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
    for (Refusal reason : Refusal.values()) {
      refused.put(
          reason,
          Counter.builder(REFUSED)
              .description("Provisioning requests refused, by reason")
              .tag("reason", reason.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
    created =
        Counter.builder(CREATIONS)
            .description("Devices created by provisioning (ALLOW_CREATE_NEW_DEVICES)")
            .register(registry);
    Gauge.builder(ADDRESSES_TRACKED, throttle, ProvisionThrottle::tracked)
        .strongReference(true)
        .description("Source addresses the provisioning throttle remembers")
        .register(registry);
  }

  void answered(ProvisionStatus status) {
    Objects.requireNonNull(requests.get(status)).increment(); // one counter per status
  }

  void created() {
    created.increment();
  }

  /**
   * Counts a refusal and logs it unless one of this reason was logged in the last 10 s. {@code
   * detail} must hold nothing secret; its arguments are client text (escaped by the caller).
   */
  void refused(Refusal reason, String source, String detail) {
    Objects.requireNonNull(refused.get(reason)).increment(); // one per reason
    if (logs.get(reason).admit() < 0) { // one per reason
      return;
    }
    String tag = reason.name().toLowerCase(Locale.ROOT);
    if (reason == Refusal.STORAGE) {
      LOG.warn("[provision|{}] refused ({}): {}", source, tag, detail);
    } else {
      LOG.info("[provision|{}] refused ({}): {}", source, tag, detail);
    }
  }
}
