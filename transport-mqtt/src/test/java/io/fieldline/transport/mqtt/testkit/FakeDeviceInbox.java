package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.port.DeviceInbox;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records every submitted message with the future of its outcome; the test completes, fails or
 * leaves each future pending. Thread-safe.
 */
public final class FakeDeviceInbox implements DeviceInbox {

  /** One submitted message and the outcome the test controls. */
  public record Submission(DeviceMessage message, CompletableFuture<Ack> outcome) {
    public void store() {
      outcome.complete(Ack.stored());
    }

    public void fail() {
      outcome.completeExceptionally(new IllegalStateException("test: write failed"));
    }
  }

  private final List<Submission> submissions = new CopyOnWriteArrayList<>();

  @Override
  public CompletionStage<Ack> submit(DeviceMessage message) {
    Submission submission = new Submission(message, new CompletableFuture<>());
    submissions.add(submission);
    return submission.outcome();
  }

  public List<Submission> submissions() {
    return submissions;
  }

  public Submission submission(int index) {
    return submissions.get(index);
  }
}
