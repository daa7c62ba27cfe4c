package io.fieldline.server.ws;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The node-wide heap budget of the WebSocket API ({@code memory-budget}): every subscription takes
 * the estimate of what it keeps ({@link #subscription}) while it lives, every queued update its
 * bytes until written. Work that does not fit is refused, so no mix of sessions, subscriptions and
 * keys can hold more than the budget. Subscriptions may fill only three quarters of it ({@link
 * #tryTakeForSubscription}): the last quarter stays for the updates they send. Thread-safe (one
 * counter, compare-and-set).
 */
final class WsMemory {

  /**
   * What one subscription keeps besides its keys: its objects, its entry in the session's map, its
   * registration with the device's events, its command.
   */
  static final long SUBSCRIPTION_BYTES = 2048;

  /**
   * Fixed part of what one key costs a subscription: two {@code String} headers and arrays (the
   * name in the command and the one in the per-key state), a hash entry and its timestamp.
   */
  static final long KEY_BYTES = 240;

  private final long limit;
  private final AtomicLong used = new AtomicLong();

  WsMemory(long limit) {
    this.limit = limit;
  }

  /**
   * The estimate for a subscription following {@code keyChars} characters of key names in all, or
   * every key ({@code keyCount} being then {@code max-keys-per-command} names of 255 characters):
   * both copies of each name counted at two bytes per character.
   */
  static long subscription(int keyCount, long keyChars) {
    return SUBSCRIPTION_BYTES + keyCount * KEY_BYTES + 4 * keyChars;
  }

  /** Takes {@code bytes} if they fit; false (nothing taken) otherwise. */
  boolean tryTake(long bytes) {
    return tryTake(bytes, limit);
  }

  /** Takes a subscription's {@code bytes} if they fit in three quarters of the budget. */
  boolean tryTakeForSubscription(long bytes) {
    return tryTake(bytes, limit / 4 * 3);
  }

  private boolean tryTake(long bytes, long bound) {
    while (true) {
      long now = used.get();
      if (now + bytes > bound) {
        return false;
      }
      if (used.compareAndSet(now, now + bytes)) {
        return true;
      }
    }
  }

  /** Takes {@code bytes} whether they fit or not (a small error answer must still go out). */
  void take(long bytes) {
    used.addAndGet(bytes);
  }

  void give(long bytes) {
    used.addAndGet(-bytes);
  }

  long used() {
    return used.get();
  }

  long limit() {
    return limit;
  }
}
