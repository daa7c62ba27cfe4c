package io.fieldline.dao.cassandra.cql;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.NodeUnavailableException;
import com.datastax.oss.driver.api.core.RequestThrottlingException;
import com.datastax.oss.driver.api.core.connection.BusyConnectionException;
import com.datastax.oss.driver.api.core.connection.ClosedConnectionException;
import com.datastax.oss.driver.api.core.servererrors.BootstrappingException;
import com.datastax.oss.driver.api.core.servererrors.CASWriteUnknownException;
import com.datastax.oss.driver.api.core.servererrors.OverloadedException;
import com.datastax.oss.driver.api.core.servererrors.ReadTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.UnavailableException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import io.fieldline.common.StoreException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/**
 * Translates driver failures into {@link StoreException}: the single place where {@code
 * com.datastax} exceptions stop. Stateless.
 */
public final class StoreErrors {

  private StoreErrors() {}

  /** The {@link StoreException} for {@code error}; an existing one is returned unchanged. */
  public static StoreException translate(Throwable error) {
    Throwable cause = unwrap(error);
    if (cause instanceof StoreException) {
      return (StoreException) cause;
    }
    StoreException.Kind kind = kindOf(cause);
    return new StoreException(kind, describe(kind) + ": " + cause, cause);
  }

  /**
   * A stage that completes like {@code stage}, its failure {@linkplain #translate translated}: what
   * a store hands out from a chain of driver stages.
   */
  public static <T> CompletionStage<T> translated(CompletionStage<T> stage) {
    CompletableFuture<T> result = new CompletableFuture<>();
    stage.whenComplete(
        (value, error) -> {
          if (error != null) {
            result.completeExceptionally(translate(error));
          } else {
            result.complete(value);
          }
        });
    return result;
  }

  /** The kind a driver failure maps to. */
  public static StoreException.Kind kindOf(Throwable cause) {
    if (cause instanceof WriteTimeoutException
        || cause instanceof ReadTimeoutException
        || cause instanceof CASWriteUnknownException
        || cause instanceof DriverTimeoutException) {
      return StoreException.Kind.TIMEOUT;
    }
    // NoNodeAvailableException is an AllNodesFailedException with no node to try.
    if (cause instanceof AllNodesFailedException
        || cause instanceof UnavailableException
        || cause instanceof NodeUnavailableException
        || cause instanceof OverloadedException
        || cause instanceof BootstrappingException
        || cause instanceof BusyConnectionException
        || cause instanceof ClosedConnectionException
        || cause instanceof RequestThrottlingException
        || isClosedSession(cause)) {
      return StoreException.Kind.UNAVAILABLE;
    }
    return StoreException.Kind.FAILED;
  }

  private static boolean isClosedSession(Throwable cause) {
    // The driver fails requests on a closed session with this IllegalStateException.
    String message = cause.getMessage();
    return cause instanceof IllegalStateException
        && message != null
        && message.contains("Session is closed");
  }

  private static String describe(StoreException.Kind kind) {
    switch (kind) {
      case TIMEOUT:
        return "Cassandra did not answer in time";
      case UNAVAILABLE:
        return "Cassandra is unavailable";
      case OVERLOADED:
        return "storage overloaded";
      case FAILED:
        return "Cassandra request failed";
    }
    throw new AssertionError(kind);
  }

  private static Throwable unwrap(Throwable error) {
    Throwable current = error;
    while ((current instanceof CompletionException || current instanceof ExecutionException)
        && current.getCause() != null) {
      current = current.getCause();
    }
    return current;
  }
}
