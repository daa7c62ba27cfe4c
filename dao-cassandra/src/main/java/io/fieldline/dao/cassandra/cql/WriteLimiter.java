package io.fieldline.dao.cassandra.cql;

import io.fieldline.common.StoreException;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.dao.cassandra.CassandraConfig;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The global bound on requests outstanding to Cassandra: at most {@code maxInflight} run at once,
 * up to {@code maxQueued} more wait in FIFO order, and anything beyond fails at once with {@link
 * StoreException.Kind#OVERLOADED}. Nothing blocks: a request starts either on the submitting thread
 * or on the thread that completed an earlier request.
 *
 * <p>It owns a {@link PressureGauge} of in-flight plus queued requests, overloaded at {@code
 * maxInflight + maxQueued / 2} and relieved at {@code maxInflight / 2}; the transport subscribes to
 * it and pauses socket reads while it is overloaded, so the queue should rarely fill.
 *
 * <p>Thread-safe and lock-free: an atomic in-flight counter plus a {@link ConcurrentLinkedQueue}
 * drained by whichever thread releases a slot (one drainer at a time, so completions that happen
 * synchronously do not recurse).
 */
public final class WriteLimiter {

  private final int maxInflight;
  private final int maxQueued;
  private final AtomicInteger inflight = new AtomicInteger();
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicInteger drainRequests = new AtomicInteger();
  private final Queue<Pending<?>> queue = new ConcurrentLinkedQueue<>();
  private final Queue<CompletableFuture<Void>> idleWaiters = new ConcurrentLinkedQueue<>();
  private final PressureGauge pressure;

  /**
   * @param maxInflight most requests running at once, at least 1
   * @param maxQueued most requests waiting for a slot, at least 0
   */
  public WriteLimiter(int maxInflight, int maxQueued) {
    if (maxInflight < 1 || maxQueued < 0) {
      throw new IllegalArgumentException("need maxInflight >= 1 and maxQueued >= 0");
    }
    this.maxInflight = maxInflight;
    this.maxQueued = maxQueued;
    this.pressure =
        new PressureGauge("cassandra-writes", maxInflight + maxQueued / 2, maxInflight / 2);
  }

  /** A limiter sized from {@code fieldline.cassandra.max-inflight} and {@code max-queued}. */
  public static WriteLimiter from(CassandraConfig config) {
    return new WriteLimiter(config.maxInflight(), config.maxQueued());
  }

  /**
   * Runs {@code request} now, or once a slot is free, or fails with OVERLOADED when the queue is
   * full. The returned stage completes with the request's outcome after its slot was released. A
   * request that throws instead of returning a stage counts as a failed request.
   */
  public <T> CompletionStage<T> submit(Supplier<? extends CompletionStage<T>> request) {
    Pending<T> pending = new Pending<>(request);
    // Take a slot directly only when nobody is waiting, so queued requests keep their FIFO turn.
    if (queued.get() == 0 && tryAcquire()) {
      pressure.increment();
      run(pending);
      return pending.result;
    }
    if (queued.incrementAndGet() > maxQueued) {
      queued.decrementAndGet();
      return CompletableFuture.failedFuture(
          new StoreException(
              StoreException.Kind.OVERLOADED,
              "more than "
                  + maxInflight
                  + " Cassandra requests in flight and "
                  + maxQueued
                  + " queued"));
    }
    pressure.increment();
    queue.add(pending);
    drain();
    return pending.result;
  }

  /** Requests running now. */
  public int inflight() {
    return inflight.get();
  }

  /** Requests waiting for a slot. */
  public int queued() {
    return queued.get();
  }

  /** The gauge of in-flight plus queued requests that the transport subscribes to. */
  public PressureGauge pressure() {
    return pressure;
  }

  /** Completes once nothing is running or queued (used to drain writes at shutdown). */
  public CompletionStage<Void> whenIdle() {
    CompletableFuture<Void> waiter = new CompletableFuture<>();
    idleWaiters.add(waiter);
    signalIfIdle();
    return waiter;
  }

  private boolean tryAcquire() {
    while (true) {
      int now = inflight.get();
      if (now >= maxInflight) {
        return false;
      }
      if (inflight.compareAndSet(now, now + 1)) {
        return true;
      }
    }
  }

  private <T> void run(Pending<T> pending) {
    CompletionStage<T> stage;
    try {
      stage = pending.request.get();
    } catch (RuntimeException | Error e) {
      stage = CompletableFuture.failedFuture(e);
    }
    stage.whenComplete(
        (value, error) -> {
          inflight.decrementAndGet();
          pressure.decrement();
          if (error != null) {
            pending.result.completeExceptionally(error);
          } else {
            pending.result.complete(value);
          }
          drain();
          signalIfIdle();
        });
  }

  // Wip-counter drain loop: one thread drains at a time; a concurrent or nested call only asks the
  // running drainer for one more pass, so a request completing synchronously cannot recurse.
  private void drain() {
    if (drainRequests.getAndIncrement() != 0) {
      return;
    }
    do {
      while (!queue.isEmpty() && tryAcquire()) {
        Pending<?> next = queue.poll();
        if (next == null) {
          inflight.decrementAndGet();
          continue;
        }
        queued.decrementAndGet();
        run(next);
      }
    } while (drainRequests.decrementAndGet() != 0);
  }

  private void signalIfIdle() {
    if (idleWaiters.isEmpty() || inflight.get() != 0 || queued.get() != 0) {
      return;
    }
    CompletableFuture<Void> waiter;
    while ((waiter = idleWaiters.poll()) != null) {
      waiter.complete(null);
    }
  }

  private static final class Pending<T> {
    final Supplier<? extends CompletionStage<T>> request;
    final CompletableFuture<T> result = new CompletableFuture<>();

    Pending(Supplier<? extends CompletionStage<T>> request) {
      this.request = request;
    }
  }
}
