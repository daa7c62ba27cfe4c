package io.fieldline.cluster.forward;

import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.port.DeviceInbox;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A local gateway whose acknowledgements the test decides: stored at once ({@code autoStore}) or
 * left pending until the test completes them. Thread-safe.
 */
public final class FakeDeviceInbox implements DeviceInbox {

  /** One submitted message and the acknowledgement the test may complete. */
  public record Submitted(DeviceMessage message, CompletableFuture<Ack> ack) {}

  private final List<Submitted> submitted = new ArrayList<>();
  private volatile boolean autoStore;

  public FakeDeviceInbox(boolean autoStore) {
    this.autoStore = autoStore;
  }

  public void autoStore(boolean value) {
    autoStore = value;
  }

  @Override
  public CompletionStage<Ack> submit(DeviceMessage message) {
    CompletableFuture<Ack> ack = new CompletableFuture<>();
    synchronized (submitted) {
      submitted.add(new Submitted(message, ack));
    }
    if (autoStore) {
      ack.complete(Ack.stored());
    }
    return ack;
  }

  public List<Submitted> submitted() {
    synchronized (submitted) {
      return List.copyOf(submitted);
    }
  }

  public int count() {
    synchronized (submitted) {
      return submitted.size();
    }
  }

  public Submitted get(int index) {
    synchronized (submitted) {
      return submitted.get(index);
    }
  }

  public List<Long> receivedAts() {
    List<Long> result = new ArrayList<>();
    for (Submitted s : submitted()) {
      result.add(s.message().receivedAt());
    }
    return result;
  }
}
