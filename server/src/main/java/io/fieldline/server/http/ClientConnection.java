package io.fieldline.server.http;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * The TCP connection a request came on, as far as a route needs it: a stage that completes when the
 * connection is gone (the client closed it, or the server did). A route that holds a request open
 * for long (a long poll) frees what it holds then, instead of at its timeout. Set on every request
 * by {@link ConnectionGuard}. Thread-safe.
 */
public final class ClientConnection {

  static final AttributeKey<ClientConnection> KEY =
      AttributeKey.create("fieldline-client-connection", ClientConnection.class);

  private final CompletableFuture<Void> closed = new CompletableFuture<>();

  /** The connection of {@code request}; empty if it did not come through the listener. */
  public static Optional<ClientConnection> of(HttpRequest request) {
    return request.getAttribute(KEY);
  }

  /** Completes (normally) once the connection is closed. */
  public CompletionStage<Void> closed() {
    return closed.minimalCompletionStage();
  }

  void close() {
    closed.complete(null);
  }
}
