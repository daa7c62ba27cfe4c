package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.deadletter.DeadLetter;
import io.fieldline.common.deadletter.DeadLetterStore;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records dead letters; each write completes when the test says so. Thread-safe. */
public final class FakeDeadLetterStore implements DeadLetterStore {

  /** One dead letter and the completion of its write. */
  public record Write(DeadLetter deadLetter, CompletableFuture<Void> done) {}

  private final List<Write> writes = new CopyOnWriteArrayList<>();

  @Override
  public CompletionStage<Void> write(DeadLetter deadLetter) {
    Write write = new Write(deadLetter, new CompletableFuture<>());
    writes.add(write);
    return write.done();
  }

  public List<Write> writes() {
    return writes;
  }
}
