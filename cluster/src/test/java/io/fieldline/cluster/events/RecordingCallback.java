package io.fieldline.cluster.events;

import io.fieldline.common.rpc.RpcCallback;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A caller's callback that records each step it hears, in order: {@code sent}, {@code delivered},
 * {@code responded:<body>}, {@code undelivered:<reason>}.
 */
final class RecordingCallback implements RpcCallback {

  final List<String> steps = new CopyOnWriteArrayList<>();

  @Override
  public void sent() {
    steps.add("sent");
  }

  @Override
  public void delivered() {
    steps.add("delivered");
  }

  @Override
  public void responded(String body) {
    steps.add("responded:" + body);
  }

  @Override
  public void undelivered(String reason) {
    steps.add("undelivered:" + reason);
  }
}
