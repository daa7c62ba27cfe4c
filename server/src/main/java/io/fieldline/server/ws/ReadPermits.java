package io.fieldline.server.ws;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The storage reads one session may have in flight for its subscriptions' first updates ({@code
 * max-subscription-reads}): a command waits for a permit before it starts its read, and the
 * session's messages are read only once every command of the previous one got its permit, so a
 * client that sends faster than its reads complete is not read (backpressure) instead of piling
 * reads on the store. Thread-safe (guarded by itself); waiters are completed outside the lock.
 */
final class ReadPermits {

  private final int max;
  private final Queue<CompletableFuture<Void>> waiting = new ArrayDeque<>();
  private int taken;
  private boolean closed;

  ReadPermits(int max) {
    this.max = max;
  }

  /** Completes once a permit is taken (at once when one is free, or when the session closes). */
  CompletionStage<Void> acquire() {
    synchronized (this) {
      if (closed || taken < max) {
        taken++;
        return CompletableFuture.completedFuture(null);
      }
      CompletableFuture<Void> waiter = new CompletableFuture<>();
      waiting.add(waiter);
      return waiter;
    }
  }

  /** Gives back one permit taken by {@link #acquire}, handing it to the next waiter if any. */
  void release() {
    CompletableFuture<Void> next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        taken--;
        return;
      }
    }
    next.complete(null); // the permit passes on: taken stays
  }

  /** The session ended: every waiter goes on (and finds the session closed). */
  void close() {
    Queue<CompletableFuture<Void>> woken;
    synchronized (this) {
      closed = true;
      woken = new ArrayDeque<>(waiting);
      waiting.clear();
    }
    woken.forEach(waiter -> waiter.complete(null));
  }
}
