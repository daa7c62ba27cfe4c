package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.rpc.RpcCallback;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records every report a session makes about one server-side RPC, in order: {@code sent}, {@code
 * delivered}, {@code responded:<body>}, {@code undelivered:<reason>}. Thread-safe.
 */
public final class RecordingRpcCallback implements RpcCallback {

  private final List<String> calls = new CopyOnWriteArrayList<>();

  @Override
  public void sent() {
    calls.add("sent");
  }

  @Override
  public void delivered() {
    calls.add("delivered");
  }

  @Override
  public void responded(String body) {
    calls.add("responded:" + body);
  }

  @Override
  public void undelivered(String reason) {
    calls.add("undelivered:" + reason);
  }

  /** The reports so far, in order. */
  public List<String> calls() {
    return List.copyOf(calls);
  }
}
