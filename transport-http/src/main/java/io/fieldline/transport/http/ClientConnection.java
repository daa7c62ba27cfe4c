package io.fieldline.transport.http;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * The TCP connection a request came on, as far as a route needs it: actions run when the connection
 * is gone (the client closed it, or the server did). A route that holds a request open for long (a
 * long poll) frees what it holds then, instead of at its timeout. The server's HTTP listener
 * creates one per connection, attaches it to every request of that connection ({@link #attachTo})
 * and closes it when the connection is gone ({@link #close}). Thread-safe.
 */
public final class ClientConnection {

  private static final AttributeKey<ClientConnection> KEY =
      AttributeKey.create("fieldline-client-connection", ClientConnection.class);

  private final Set<Runnable> onClose = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** The connection of {@code request}; empty if it did not come through the listener. */
  public static Optional<ClientConnection> of(HttpRequest request) {
    return request.getAttribute(KEY);
  }

  /** {@code request} carrying this connection, for the routes to find with {@link #of}. */
  public HttpRequest attachTo(HttpRequest request) {
    return request.addAttribute(KEY, this);
  }

  /**
   * Runs {@code action} once the connection is closed (at once if it is), on the thread that saw it
   * close.
   *
   * @return unregisters {@code action}: call it when it is no longer needed, so that a long-lived
   *     connection does not collect the actions of every request it carried
   */
  public Runnable whenClosed(Runnable action) {
    onClose.add(action);
    if (closed && onClose.remove(action)) {
      action.run();
    }
    return () -> onClose.remove(action);
  }

  /** Marks the connection gone and runs every registered action (the listener calls it once). */
  public void close() {
    closed = true;
    for (Runnable action : onClose) {
      if (onClose.remove(action)) {
        action.run();
      }
    }
  }
}
