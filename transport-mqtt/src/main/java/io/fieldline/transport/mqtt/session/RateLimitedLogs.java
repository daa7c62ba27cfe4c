package io.fieldline.transport.mqtt.session;

import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * One {@link RateLimitedLog} per constant of an enum (per refusal, per close reason), so that a
 * flood of one kind does not hide the others. Held in an array indexed by ordinal and filled for
 * every constant: a lookup cannot miss. Thread-safe, like the logs it holds.
 */
public final class RateLimitedLogs<E extends Enum<E>> {

  private final RateLimitedLog[] logs;

  /** One log through {@code log} per constant of {@code kinds}, each at most once per interval. */
  public RateLimitedLogs(Class<E> kinds, Logger log, long interval, TimeUnit unit) {
    int count = kinds.getEnumConstants().length;
    logs = new RateLimitedLog[count];
    for (int i = 0; i < count; i++) {
      logs[i] = new RateLimitedLog(log, interval, unit);
    }
  }

  /** The log of {@code kind}'s budget. */
  public RateLimitedLog get(E kind) {
    return logs[kind.ordinal()];
  }
}
