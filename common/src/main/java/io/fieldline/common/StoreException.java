package io.fieldline.common;

/**
 * A storage operation did not complete. The DAO translates driver errors into this once, at its
 * boundary; callers branch on {@link #kind()}.
 */
public class StoreException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why the operation failed; used as a bounded metric tag. */
  public enum Kind {
    /** The store did not answer within the request timeout. */
    TIMEOUT,
    /** No replica could be reached, or the store refused the request. */
    UNAVAILABLE,
    /** The global in-flight bound of the store was exceeded. */
    OVERLOADED,
    /** Anything else: a bug, a schema problem. */
    FAILED
  }

  private final Kind kind;

  public StoreException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  public StoreException(Kind kind, String message) {
    super(message);
    this.kind = kind;
  }

  public Kind kind() {
    return kind;
  }
}
