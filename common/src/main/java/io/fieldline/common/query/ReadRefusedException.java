package io.fieldline.common.query;

import io.fieldline.common.StoreException;

/**
 * A read was refused before it reached storage because the node's budget for reads is spent: the
 * reader's own share ({@link Scope#USER}: it already has its most reads running or waiting) or the
 * node's ({@link Scope#NODE}: every read slot busy and the wait queue full, or no slot freed within
 * the longest wait, for instance while device writes keep storage saturated). Its {@link #kind()}
 * is {@link StoreException.Kind#OVERLOADED}; nothing was read, and the same read may succeed after
 * {@link #retryAfterSeconds()}. Front-ends answer it as "overloaded, retry later" (REST: 429 for
 * {@code USER}, 503 for {@code NODE}, both with {@code Retry-After}).
 */
public final class ReadRefusedException extends StoreException {

  private static final long serialVersionUID = 1L;

  /** Whose budget was spent. */
  public enum Scope {
    /** The reader's own concurrent reads. */
    USER,
    /** The node's reads in flight and waiting, shared by every reader. */
    NODE
  }

  private final Scope scope;
  private final int retryAfterSeconds;

  /**
   * @param scope whose budget was spent
   * @param message what to tell the client (no internals)
   * @param retryAfterSeconds when a retry is worth it, at least 1
   */
  public ReadRefusedException(Scope scope, String message, int retryAfterSeconds) {
    super(Kind.OVERLOADED, message);
    this.scope = scope;
    this.retryAfterSeconds = Math.max(1, retryAfterSeconds);
  }

  /** Whose budget was spent. */
  public Scope scope() {
    return scope;
  }

  /** Seconds after which the same read is worth retrying. */
  public int retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
