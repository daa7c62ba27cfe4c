package io.fieldline.dao.cassandra.cql;

import io.fieldline.common.StoreException;
import io.fieldline.common.query.ReadRefusedException;
import io.fieldline.dao.cassandra.CassandraConfig;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's budget for storage reads made for clients (REST, WebSocket, device attribute
 * requests), separate from the {@link WriteLimiter} of device writes so that reads can never take
 * the writes' slots: at most {@code maxInflight} reads (one read is one query of the read port,
 * whatever statements it issues) run at once, up to {@code maxQueued} more wait in FIFO order for
 * at most {@code maxWait}, and one user has at most {@code maxPerUser} reads running or waiting.
 * Beyond any of these a read fails at once with {@link ReadRefusedException} ({@code OVERLOADED}),
 * before touching Cassandra.
 *
 * <p>Reads come second: while {@code writesBusy} says the write path is saturated (its pressure
 * gauges overloaded), no waiting read starts and new reads wait too; {@link #drain} (called when
 * the write pressure is relieved) starts them again. Reads already running finish.
 *
 * <p>Refusals are counted per {@link Refusal} and logged as one episode ({@link FailureEpisodes}:
 * one WARN when refusals start, a reminder at most every 10 s, one INFO when a read is admitted
 * again). Thread-safe: a small lock guards the counters and the queue; reads start outside it, on
 * the submitting thread or on the thread that completed an earlier read.
 */
public final class ReadLimiter {

  private static final Logger LOG = LoggerFactory.getLogger(ReadLimiter.class);

  /** Why a read was refused; the {@code reason} tag of the refusal counter. */
  public enum Refusal {
    /** The user already has {@code max-per-user} reads running or waiting. */
    USER_LIMIT,
    /** Every slot busy and {@code max-queued} reads already waiting. */
    QUEUE_FULL,
    /** Waited {@code max-wait} without getting a slot. */
    WAIT_TIMEOUT
  }

  private final int maxInflight;
  private final int maxQueued;
  private final int maxPerUser;
  private final long maxWaitNanos;
  private final BooleanSupplier writesBusy;
  private final Function<Long, Executor> delayed;
  private final FailureEpisodes refusals;
  private final ArrayDeque<Pending<?>> queue = new ArrayDeque<>();
  private final Map<String, Integer> perUser = new HashMap<>();
  private final Map<Refusal, AtomicLong> refused = new EnumMap<>(Refusal.class);
  private int inflight;

  /**
   * @param maxInflight most reads running at once, at least 1
   * @param maxQueued most reads waiting for a slot, at least 0
   * @param maxPerUser most reads of one user running or waiting, at least 1
   * @param maxWait longest wait for a slot, positive
   * @param writesBusy whether the write path is saturated now (reads then wait)
   */
  public ReadLimiter(
      int maxInflight,
      int maxQueued,
      int maxPerUser,
      Duration maxWait,
      BooleanSupplier writesBusy) {
    this(
        maxInflight,
        maxQueued,
        maxPerUser,
        maxWait,
        writesBusy,
        nanos -> CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS));
  }

  /**
   * A limiter sized from {@code fieldline.cassandra.reads}.
   *
   * @param writesBusy whether the write path is saturated now (reads then wait)
   */
  public static ReadLimiter from(CassandraConfig.ReadsConfig config, BooleanSupplier writesBusy) {
    return new ReadLimiter(
        config.maxInflight(),
        config.maxQueued(),
        config.maxPerUser(),
        config.maxWait(),
        writesBusy);
  }

  ReadLimiter(
      int maxInflight,
      int maxQueued,
      int maxPerUser,
      Duration maxWait,
      BooleanSupplier writesBusy,
      Function<Long, Executor> delayed) {
    if (maxInflight < 1
        || maxQueued < 0
        || maxPerUser < 1
        || maxWait.isNegative()
        || maxWait.isZero()) {
      throw new IllegalArgumentException(
          "need maxInflight >= 1, maxQueued >= 0, maxPerUser >= 1 and maxWait > 0");
    }
    this.maxInflight = maxInflight;
    this.maxQueued = maxQueued;
    this.maxPerUser = maxPerUser;
    this.maxWaitNanos = maxWait.toNanos();
    this.writesBusy = writesBusy;
    this.delayed = delayed;
    this.refusals = new FailureEpisodes(LOG, "[cql] client reads", 10);
    for (Refusal reason : Refusal.values()) {
      refused.put(reason, new AtomicLong());
    }
  }

  /**
   * Runs {@code read} now, or once a slot is free, or fails with {@link ReadRefusedException}. The
   * returned stage completes with the read's outcome after its slot was released.
   *
   * @param user whose read it is; empty for a read not made for a logged-in user (no per-user bound
   *     applies)
   */
  public <T> CompletionStage<T> submit(String user, Supplier<? extends CompletionStage<T>> read) {
    Pending<T> pending = new Pending<>(user, read);
    Refusal refusal;
    boolean runNow = false;
    synchronized (this) {
      refusal = admit(pending);
      if (refusal == null) {
        if (queue.isEmpty() && inflight < maxInflight && !writesBusy.getAsBoolean()) {
          inflight++;
          runNow = true;
        } else {
          queue.addLast(pending);
        }
      }
    }
    if (refusal != null) {
      return CompletableFuture.failedFuture(refuse(refusal));
    }
    refusals.onSuccess();
    if (runNow) {
      run(pending);
    } else {
      delayed.apply(maxWaitNanos).execute(() -> expire(pending));
    }
    return pending.result;
  }

  /** Starts waiting reads while slots are free and writes are not saturated. */
  public void drain() {
    while (true) {
      Pending<?> next;
      synchronized (this) {
        if (queue.isEmpty() || inflight >= maxInflight || writesBusy.getAsBoolean()) {
          return;
        }
        next = queue.pollFirst();
        inflight++;
      }
      run(next);
    }
  }

  /** Reads running now. */
  public synchronized int inflight() {
    return inflight;
  }

  /** Reads waiting for a slot. */
  public synchronized int queued() {
    return queue.size();
  }

  /** Reads refused so far for {@code reason}. */
  public long refused(Refusal reason) {
    return Objects.requireNonNull(refused.get(reason)).get();
  }

  // Under the lock: the refusal for a new read, or null after counting it for its user.
  private @Nullable Refusal admit(Pending<?> pending) {
    boolean perUserBound = !pending.user.isEmpty();
    if (perUserBound && perUser.getOrDefault(pending.user, 0) >= maxPerUser) {
      return Refusal.USER_LIMIT;
    }
    boolean mustWait = !queue.isEmpty() || inflight >= maxInflight || writesBusy.getAsBoolean();
    if (mustWait && queue.size() >= maxQueued) {
      return Refusal.QUEUE_FULL;
    }
    if (perUserBound) {
      perUser.merge(pending.user, 1, Integer::sum);
    }
    return null;
  }

  private StoreException refuse(Refusal reason) {
    Objects.requireNonNull(refused.get(reason)).incrementAndGet(); // one per reason
    ReadRefusedException error =
        switch (reason) {
          case USER_LIMIT ->
              new ReadRefusedException(
                  ReadRefusedException.Scope.USER,
                  "too many concurrent reads: at most "
                      + maxPerUser
                      + " per user running or waiting; retry when one has finished",
                  1);
          case QUEUE_FULL ->
              new ReadRefusedException(
                  ReadRefusedException.Scope.NODE,
                  "storage reads overloaded: "
                      + maxInflight
                      + " running and "
                      + maxQueued
                      + " waiting; retry later",
                  1);
          case WAIT_TIMEOUT ->
              new ReadRefusedException(
                  ReadRefusedException.Scope.NODE,
                  "storage reads overloaded: no read slot free within "
                      + TimeUnit.NANOSECONDS.toMillis(maxWaitNanos)
                      + " ms; retry later",
                  1);
        };
    refusals.onFailure(error);
    return error;
  }

  private void expire(Pending<?> pending) {
    boolean removed;
    synchronized (this) {
      removed = queue.remove(pending);
      if (removed) {
        releaseUser(pending.user);
      }
    }
    if (removed) {
      pending.result.completeExceptionally(refuse(Refusal.WAIT_TIMEOUT));
    }
  }

  private <T> void run(Pending<T> pending) {
    CompletionStage<T> stage;
    try {
      stage = pending.read.get();
    } catch (RuntimeException | Error e) {
      stage = CompletableFuture.failedFuture(e);
    }
    stage.whenComplete(
        (value, error) -> {
          synchronized (this) {
            inflight--;
            releaseUser(pending.user);
          }
          if (error != null) {
            pending.result.completeExceptionally(error);
          } else {
            pending.result.complete(value);
          }
          drain();
        });
  }

  // Under the lock.
  private void releaseUser(String user) {
    if (!user.isEmpty()) {
      perUser.computeIfPresent(user, (name, count) -> count <= 1 ? null : count - 1);
    }
  }

  private static final class Pending<T> {
    final String user;
    final Supplier<? extends CompletionStage<T>> read;
    final CompletableFuture<T> result = new CompletableFuture<>();

    Pending(String user, Supplier<? extends CompletionStage<T>> read) {
      this.user = user;
      this.read = read;
    }
  }
}
