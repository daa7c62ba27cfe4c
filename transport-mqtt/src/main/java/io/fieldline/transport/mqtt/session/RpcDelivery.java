package io.fieldline.transport.mqtt.session;

import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One server-side RPC a session took, from the moment it was taken until it ends: the id {@code n}
 * of its topic {@code v1/devices/me/rpc/request/{n}}, the request, where its outcome is reported,
 * and how far it got. Each report reaches the callback at most once: {@link #markDelivered} and
 * {@link #settle} decide atomically, whichever connection or thread gets there first.
 *
 * <p>Thread-safe: created by the thread that offered the request, then handled by the event loop of
 * the connection that delivers it, or by whoever ends its session.
 */
public final class RpcDelivery {

  private final int requestId;
  private final ToDeviceRpc rpc;
  private final RpcCallback callback;
  private final AtomicBoolean delivered = new AtomicBoolean();
  private final AtomicBoolean settled = new AtomicBoolean();
  // Epoch milliseconds by which a two-way request must be answered; 0 until it is sent.
  private volatile long answerDeadlineMillis;

  /**
   * @param requestId the {@code n} of the request's topic, unique within its session
   */
  public RpcDelivery(int requestId, ToDeviceRpc rpc, RpcCallback callback) {
    this.requestId = requestId;
    this.rpc = rpc;
    this.callback = callback;
  }

  public int requestId() {
    return requestId;
  }

  public ToDeviceRpc rpc() {
    return rpc;
  }

  public RpcCallback callback() {
    return callback;
  }

  public boolean isDelivered() {
    return delivered.get();
  }

  /** Records delivery; true for the first call only (the one that reports it). */
  public boolean markDelivered() {
    return delivered.compareAndSet(false, true);
  }

  /** Ends the request; true for the first call only (the one that reports how it ended). */
  public boolean settle() {
    return settled.compareAndSet(false, true);
  }

  public boolean isSettled() {
    return settled.get();
  }

  /**
   * Gives the request up: reported as undelivered unless it was delivered or already ended.
   *
   * @return whether {@link RpcCallback#undelivered} was called
   */
  public boolean giveUp(String reason) {
    if (settle() && !delivered.get()) {
      callback.undelivered(reason);
      return true;
    }
    return false;
  }

  /** When a sent two-way request must have been answered (epoch ms), 0 if not sent yet. */
  public long answerDeadlineMillis() {
    return answerDeadlineMillis;
  }

  public void answerDeadlineMillis(long epochMillis) {
    answerDeadlineMillis = epochMillis;
  }
}
