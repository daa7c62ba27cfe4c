package io.fieldline.dao.cassandra.cql;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Collects the rows of a paged result asynchronously, fetching the next page only when the current
 * one is consumed. Callbacks run on driver I/O threads; mappers must be cheap.
 */
public final class AsyncRows {

  private AsyncRows() {}

  /** Maps every row of every page, up to {@code limit} rows (use Integer.MAX_VALUE for all). */
  public static <T> CompletionStage<List<T>> collect(
      CompletionStage<AsyncResultSet> first, Function<Row, T> mapper, int limit) {
    List<T> out = new ArrayList<>();
    return first.thenCompose(page -> consume(page, mapper, limit, out));
  }

  /** Feeds every row of every page to {@code consumer}. */
  public static CompletionStage<Void> forEach(
      CompletionStage<AsyncResultSet> first, Consumer<Row> consumer) {
    return first.thenCompose(page -> consumeEach(page, consumer));
  }

  private static <T> CompletionStage<List<T>> consume(
      AsyncResultSet page, Function<Row, T> mapper, int limit, List<T> out) {
    for (Row row : page.currentPage()) {
      if (out.size() >= limit) {
        return CompletableFuture.completedFuture(out);
      }
      out.add(mapper.apply(row));
    }
    if (out.size() >= limit || !page.hasMorePages()) {
      return CompletableFuture.completedFuture(out);
    }
    return page.fetchNextPage().thenCompose(next -> consume(next, mapper, limit, out));
  }

  private static CompletionStage<Void> consumeEach(AsyncResultSet page, Consumer<Row> consumer) {
    for (Row row : page.currentPage()) {
      consumer.accept(row);
    }
    if (!page.hasMorePages()) {
      return CompletableFuture.completedFuture(null);
    }
    return page.fetchNextPage().thenCompose(next -> consumeEach(next, consumer));
  }
}
