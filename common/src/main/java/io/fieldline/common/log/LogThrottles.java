package io.fieldline.common.log;

/**
 * One {@link LogThrottle} per constant of an enum (a refusal, a close reason), so that a flood of
 * one kind cannot hide the others. Held in an array indexed by ordinal and filled for every
 * constant, so a lookup cannot miss. Thread-safe, like the throttles it holds.
 *
 * @param <E> the kinds of line
 */
public final class LogThrottles<E extends Enum<E>> {

  private final LogThrottle[] throttles;

  /** One throttle, on the default interval, per constant of {@code kinds}. */
  public LogThrottles(Class<E> kinds) {
    int count = kinds.getEnumConstants().length;
    throttles = new LogThrottle[count];
    for (int i = 0; i < count; i++) {
      throttles[i] = new LogThrottle();
    }
  }

  /** The throttle of {@code kind}'s lines. */
  public LogThrottle get(E kind) {
    return throttles[kind.ordinal()];
  }
}
