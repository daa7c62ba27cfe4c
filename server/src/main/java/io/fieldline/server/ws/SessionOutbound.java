package io.fieldline.server.ws;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes one session has waiting for its socket ({@code max-queued-bytes}): updates queued,
 * updates or parts of them not yet taken by Pekko, values its new subscriptions hold. Every byte is
 * also taken from the node's {@link WsMemory} budget and given back once Pekko took it, or at the
 * latest when the session's stream ended ({@link #settle}). Thread-safe (one counter,
 * compare-and-set; {@link #SETTLED} once settled, after which nothing is counted).
 */
final class SessionOutbound implements LiveSubscription.Outbound {

  /** What {@link #reserve} found. */
  enum Reserved {
    TAKEN,
    /** The session already has {@code max-queued-bytes} waiting. */
    SESSION_FULL,
    /** The node's budget cannot take it. */
    NODE_FULL,
    /** The session's stream ended. */
    ENDED
  }

  private static final long SETTLED = Long.MIN_VALUE / 2;

  private final WsMemory memory;
  private final long max;
  private final AtomicLong waiting = new AtomicLong();

  SessionOutbound(WsMemory memory, long max) {
    this.memory = memory;
    this.max = max;
  }

  /**
   * Takes {@code bytes} of the session's and the node's allowances; beyond the session's one only
   * if nothing waits (one update always fits an empty queue).
   */
  Reserved reserve(long bytes) {
    while (true) {
      long before = waiting.get();
      if (before < 0) {
        return Reserved.ENDED;
      }
      if (before > 0 && before + bytes > max) {
        return Reserved.SESSION_FULL;
      }
      if (!memory.tryTake(bytes)) {
        return Reserved.NODE_FULL;
      }
      if (waiting.compareAndSet(before, before + bytes)) {
        return Reserved.TAKEN;
      }
      memory.give(bytes); // raced with another update: try again
    }
  }

  /** Like {@link #reserve} for a small answer that must go out: counted, never refused. */
  boolean force(long bytes) {
    while (true) {
      long before = waiting.get();
      if (before < 0) {
        return false;
      }
      if (waiting.compareAndSet(before, before + bytes)) {
        memory.take(bytes);
        return true;
      }
    }
  }

  @Override
  public boolean take(long bytes) {
    return reserve(bytes) == Reserved.TAKEN;
  }

  @Override
  public void give(long bytes) {
    while (bytes > 0) {
      long before = waiting.get();
      if (before < 0) {
        return; // settled: everything was given back at once
      }
      if (waiting.compareAndSet(before, before - bytes)) {
        memory.give(bytes);
        return;
      }
    }
  }

  /** The session's stream ended: what is still counted goes back to the node, once. */
  void settle() {
    long left = waiting.getAndSet(SETTLED);
    if (left > 0) {
      memory.give(left);
    }
  }

  /** The size of {@code text} encoded as UTF-8, as a text frame carries it. */
  static long utf8Length(String text) {
    long bytes = text.length();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 0x80) {
        if (c < 0x800) {
          bytes++;
        } else if (Character.isHighSurrogate(c)) {
          bytes += 2; // with its low surrogate: 4 bytes for 2 chars
          i++;
        } else {
          bytes += 2;
        }
      }
    }
    return bytes;
  }
}
