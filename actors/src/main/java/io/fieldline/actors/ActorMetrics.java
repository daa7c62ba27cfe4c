package io.fieldline.actors;

import io.fieldline.common.kv.Ack;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The device actors' meters, and the one place where a message's acknowledgement is completed (so
 * every rejection is counted exactly once). Names are {@code fieldline.device.*}; the only tag
 * comes from {@link Ack.Reason}, never from a device id. Thread-safe: the gauges are atomics
 * updated from the actors, read by the registry.
 */
public final class ActorMetrics {

  /** Gauge: device actors alive (including ones finishing their writes before they stop). */
  public static final String ACTORS_ACTIVE = "fieldline.device.actors.active";

  /** Gauge: writes of all device actors started and not yet completed. */
  public static final String WRITES_INFLIGHT = "fieldline.device.writes.inflight";

  /** Counter: messages rejected by the device actors or the gateway, tagged {@link #REASON}. */
  public static final String REJECTED = "fieldline.device.rejected";

  /** Counter: device actors stopped because they were idle. */
  public static final String PASSIVATIONS = "fieldline.device.passivations";

  /** Tag of {@link #REJECTED}: the lower-case {@link Ack.Reason}. */
  public static final String REASON = "reason";

  private final MeterRegistry registry;
  private final AtomicInteger activeActors = new AtomicInteger();
  private final AtomicInteger inflightWrites = new AtomicInteger();
  private final Map<Ack.Reason, Counter> rejected = new EnumMap<>(Ack.Reason.class);
  private final Counter passivations;
  private final List<Meter> meters = new ArrayList<>();

  /** Registers every meter at once, so dashboards see zeros rather than gaps. */
  ActorMetrics(MeterRegistry registry) {
    this.registry = registry;
    meters.add(
        Gauge.builder(ACTORS_ACTIVE, activeActors, AtomicInteger::get)
            .description("Device actors alive")
            .register(registry));
    meters.add(
        Gauge.builder(WRITES_INFLIGHT, inflightWrites, AtomicInteger::get)
            .description("Device writes started and not yet completed, all devices")
            .register(registry));
    for (Ack.Reason reason : Ack.Reason.values()) {
      Counter counter =
          Counter.builder(REJECTED)
              .tag(REASON, reason.name().toLowerCase(Locale.ROOT))
              .description("Device messages not stored, by reason")
              .register(registry);
      rejected.put(reason, counter);
      meters.add(counter);
    }
    passivations =
        Counter.builder(PASSIVATIONS)
            .description("Device actors stopped because they were idle")
            .register(registry);
    meters.add(passivations);
  }

  /**
   * Completes {@code ack} with {@code outcome} unless it is already complete (for example by its
   * timeout), counting a rejection only when this call decided the outcome.
   *
   * @return whether this call completed the acknowledgement
   */
  boolean complete(CompletableFuture<Ack> ack, Ack outcome) {
    boolean completed = ack.complete(outcome);
    if (completed && outcome instanceof Ack.Rejected rejection) {
      Objects.requireNonNull(rejected.get(rejection.reason())).increment(); // every reason has one
    }
    return completed;
  }

  /** Shorthand for {@link #complete} with a rejection. */
  boolean reject(CompletableFuture<Ack> ack, Ack.Reason reason, String detail) {
    return complete(ack, Ack.rejected(reason, detail));
  }

  void actorStarted() {
    activeActors.incrementAndGet();
  }

  void actorStopped() {
    activeActors.decrementAndGet();
  }

  void writeStarted() {
    inflightWrites.incrementAndGet();
  }

  void writeFinished() {
    inflightWrites.decrementAndGet();
  }

  void passivated() {
    passivations.increment();
  }

  /** Writes in flight now, all devices. */
  int inflightWrites() {
    return inflightWrites.get();
  }

  /** Removes this instance's meters from the registry (after the gateway shut down). */
  void unregister() {
    meters.forEach(registry::remove);
  }
}
