package io.fieldline.fleet.ota;

import io.fieldline.common.DeviceId;
import io.fieldline.common.profile.DeviceProfileId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fan-outs of profiles' firmware on this node ({@link FirmwareAssignments}): each brings every
 * device of a profile up to date with the given {@code sync}. Bounds:
 *
 * <ul>
 *   <li>at most {@value #PARALLELISM} syncs in flight on the node, across all profiles' fan-outs
 *       (lanes pull the next device when a sync ends; nothing is built per device up front);
 *   <li>per profile, at most one fan-out running and one pending: requests made while one runs
 *       coalesce into the pending one (which lists the devices again when it starts, so it covers
 *       them all);
 *   <li>a fan-out that fails (its devices could not be listed, or some could not be brought up to
 *       date) is tried again up to {@value #RETRIES} times, {@value #FIRST_RETRY_MILLIS} ms later
 *       and then twice as long each time, unless a request is pending (which then runs instead);
 *       whether a profile's last fan-out failed is kept ({@link #lastFailed}) so that saving the
 *       same firmware again can start a new one.
 * </ul>
 *
 * <p>Fan-outs are not persisted: one still running when the node stops is dropped (its devices'
 * attributes are brought up to date by the next fan-out of the profile, or by their next save).
 * Thread-safe.
 */
final class ProfileFanOuts {

  private static final Logger LOG = LoggerFactory.getLogger(ProfileFanOuts.class);

  /** Syncs in flight at most on the node, across profiles. */
  static final int PARALLELISM = 16;

  /** Retries of a failed fan-out. */
  static final int RETRIES = 3;

  static final long FIRST_RETRY_MILLIS = 1_000;

  /** A profile's fan-outs: guarded by {@code ProfileFanOuts.this}. */
  private static final class State {
    @Nullable String pending;
    boolean lastFailed;
    final CompletableFuture<Void> idle = new CompletableFuture<>();
  }

  private final Function<DeviceProfileId, CompletionStage<List<DeviceId>>> devices;
  private final Function<DeviceId, CompletionStage<Void>> sync;
  private final long firstRetryMillis;
  private final Permits permits = new Permits(PARALLELISM);
  // Profiles with a fan-out running, and those whose last fan-out failed.
  private final Map<DeviceProfileId, State> states = new HashMap<>();

  /**
   * @param devices the devices of a profile ({@code DeviceProfileStore#devices})
   * @param sync brings one device up to date
   */
  ProfileFanOuts(
      Function<DeviceProfileId, CompletionStage<List<DeviceId>>> devices,
      Function<DeviceId, CompletionStage<Void>> sync,
      long firstRetryMillis) {
    this.devices = devices;
    this.sync = sync;
    this.firstRetryMillis = firstRetryMillis;
  }

  /** Starts a fan-out of the profile, or makes one pending if one runs ({@code firmware}: logs). */
  void request(DeviceProfileId profile, String firmware) {
    synchronized (this) {
      State state = states.get(profile);
      if (state != null && running(state)) {
        state.pending = firmware;
        return;
      }
      states.put(profile, new State());
    }
    run(profile, firmware, 0);
  }

  // A state whose idle future is not done has a fan-out running.
  private static boolean running(State state) {
    return !state.idle.isDone();
  }

  /** Whether the profile's last fan-out on this node failed (after its retries). */
  synchronized boolean lastFailed(DeviceProfileId profile) {
    State state = states.get(profile);
    return state != null && state.lastFailed && !running(state);
  }

  /** Forgets a deleted profile's failed fan-out, if any (a running one ends on its own). */
  synchronized void forget(DeviceProfileId profile) {
    State state = states.get(profile);
    if (state != null && !running(state)) {
      states.remove(profile);
    }
  }

  /** Completes once no fan-out of the profile runs or is pending on this node. */
  synchronized CompletionStage<Void> idle(DeviceProfileId profile) {
    State state = states.get(profile);
    return state == null ? CompletableFuture.completedFuture(null) : state.idle;
  }

  private void run(DeviceProfileId profile, String firmware, int attempt) {
    long started = System.nanoTime();
    CompletableFuture<Outcome> outcome;
    try {
      outcome = devices.apply(profile).thenCompose(this::syncAll).toCompletableFuture();
    } catch (RuntimeException e) {
      outcome = CompletableFuture.failedFuture(e);
    }
    outcome.whenComplete(
        (done, error) -> {
          boolean failed = error != null || done.failed > 0;
          log(profile, firmware, attempt, done, error, started);
          ended(profile, firmware, attempt, failed);
        });
  }

  private void ended(DeviceProfileId profile, String firmware, int attempt, boolean failed) {
    String next;
    int nextAttempt;
    State state;
    synchronized (this) {
      state = states.get(profile);
      if (state == null) {
        return;
      }
      if (state.pending != null) {
        next = state.pending;
        state.pending = null;
        nextAttempt = 0;
      } else if (failed && attempt < RETRIES) {
        next = firmware;
        nextAttempt = attempt + 1;
      } else {
        state.lastFailed = failed;
        if (!failed) {
          states.remove(profile);
        }
        next = null;
        nextAttempt = 0;
      }
    }
    if (next == null) {
      state.idle.complete(null);
      return;
    }
    if (nextAttempt == 0) {
      run(profile, next, 0);
      return;
    }
    long delay = firstRetryMillis << (nextAttempt - 1);
    Executor later = CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS);
    String retried = next;
    CompletableFuture.runAsync(() -> run(profile, retried, nextAttempt), later);
  }

  /** How a fan-out's syncs went. */
  private record Outcome(int devices, int failed, @Nullable Throwable firstFailure) {}

  // Up to PARALLELISM lanes, each pulling the next device once its sync ends; every sync also
  // takes one of the node's permits.
  private CompletionStage<Outcome> syncAll(List<DeviceId> all) {
    AtomicInteger next = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    AtomicReference<Throwable> firstFailure = new AtomicReference<>();
    List<CompletableFuture<Void>> lanes = new ArrayList<>();
    for (int lane = 0; lane < Math.min(PARALLELISM, all.size()); lane++) {
      CompletableFuture<Void> laneDone = new CompletableFuture<>();
      lanes.add(laneDone);
      pull(all, next, failed, firstFailure, laneDone);
    }
    return CompletableFuture.allOf(lanes.toArray(new CompletableFuture<?>[0]))
        .thenApply(done -> new Outcome(all.size(), failed.get(), firstFailure.get()));
  }

  // Loops while syncs complete at once (no stack built up), else goes on when the sync ends.
  private void pull(
      List<DeviceId> all,
      AtomicInteger next,
      AtomicInteger failed,
      AtomicReference<Throwable> firstFailure,
      CompletableFuture<Void> laneDone) {
    while (true) {
      int index = next.getAndIncrement();
      if (index >= all.size()) {
        laneDone.complete(null);
        return;
      }
      DeviceId device = all.get(index);
      CompletableFuture<Void> step =
          permits
              .acquire()
              .thenCompose(
                  permit -> {
                    try {
                      return sync.apply(device);
                    } catch (RuntimeException e) {
                      return CompletableFuture.<Void>failedFuture(e);
                    }
                  })
              .handle(
                  (synced, error) -> {
                    permits.release();
                    if (error != null) {
                      failed.incrementAndGet();
                      firstFailure.compareAndSet(null, error);
                    }
                    return null;
                  });
      if (!step.isDone()) {
        step.thenRun(() -> pull(all, next, failed, firstFailure, laneDone));
        return;
      }
    }
  }

  private static void log(
      DeviceProfileId profile,
      String firmware,
      int attempt,
      @Nullable Outcome outcome,
      @Nullable Throwable error,
      long startedNanos) {
    long millis = (System.nanoTime() - startedNanos) / 1_000_000;
    String retry = attempt < RETRIES ? ", tried again later" : ", not tried again";
    if (error != null || outcome == null) {
      LOG.warn(
          "[profile|{}] firmware {}: its devices could not be listed (attempt {}{})",
          profile,
          firmware,
          attempt + 1,
          retry,
          error);
    } else if (outcome.failed() == 0) {
      LOG.info(
          "[profile|{}] firmware {}: fw_* attributes of its {} devices up to date in {} ms",
          profile,
          firmware,
          outcome.devices(),
          millis);
    } else {
      LOG.warn(
          "[profile|{}] firmware {}: fw_* attributes of {} of its {} devices could not be brought"
              + " up to date in {} ms (attempt {}{}); the first failure:",
          profile,
          firmware,
          outcome.failed(),
          outcome.devices(),
          millis,
          attempt + 1,
          retry,
          outcome.firstFailure());
    }
  }

  /** An asynchronous semaphore: waiters queue in order, none blocks a thread. */
  private static final class Permits {

    private final ArrayDeque<CompletableFuture<Void>> waiters = new ArrayDeque<>();
    private int available;

    Permits(int permits) {
      this.available = permits;
    }

    CompletableFuture<Void> acquire() {
      synchronized (this) {
        if (available > 0) {
          available--;
          return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> waiter = new CompletableFuture<>();
        waiters.add(waiter);
        return waiter;
      }
    }

    void release() {
      CompletableFuture<Void> next;
      synchronized (this) {
        next = waiters.poll();
        if (next == null) {
          available++;
          return;
        }
      }
      next.complete(null);
    }
  }
}
