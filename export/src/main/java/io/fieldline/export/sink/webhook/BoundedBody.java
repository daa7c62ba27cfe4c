package io.fieldline.export.sink.webhook;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;

/**
 * A response body read up to a limit: the first {@code limit} bytes are kept (for an error
 * message), and a body longer than that is cut off by cancelling the subscription (the JDK client
 * then closes the connection). The JDK's handlers either buffer everything or discard everything.
 *
 * <p>Signals arrive one after another on the HTTP client's threads (Flow's rule §1.3), so the
 * fields need no locking.
 */
final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {

  private final int limit;
  private final ByteArrayOutputStream kept;
  private final CompletableFuture<byte[]> result = new CompletableFuture<>();
  private Flow.@Nullable Subscription subscription;

  BoundedBody(int limit) {
    this.limit = limit;
    this.kept = new ByteArrayOutputStream(Math.min(limit, 512));
  }

  @Override
  public CompletionStage<byte[]> getBody() {
    return result;
  }

  @Override
  public void onSubscribe(Flow.Subscription subscription) {
    this.subscription = subscription;
    subscription.request(1);
  }

  @Override
  public void onNext(List<ByteBuffer> items) {
    Flow.Subscription current = subscription;
    if (current == null || result.isDone()) {
      return;
    }
    for (ByteBuffer item : items) {
      int room = limit - kept.size();
      if (item.remaining() > room) {
        byte[] part = new byte[room];
        item.get(part);
        kept.write(part, 0, room);
        current.cancel();
        result.complete(kept.toByteArray());
        return;
      }
      byte[] all = new byte[item.remaining()];
      item.get(all);
      kept.write(all, 0, all.length);
    }
    current.request(1);
  }

  @Override
  public void onError(Throwable throwable) {
    result.completeExceptionally(throwable);
  }

  @Override
  public void onComplete() {
    result.complete(kept.toByteArray());
  }
}
