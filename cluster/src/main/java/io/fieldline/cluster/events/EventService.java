package io.fieldline.cluster.events;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.EventReceiveOutcome;
import io.fieldline.cluster.ClusterMetrics.ProgressReceiveOutcome;
import io.fieldline.cluster.internal.proto.DeviceEventsGrpc;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.EventEnvelope;
import io.fieldline.cluster.internal.proto.EventReceipt;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.log.LogThrottle;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving end of the event streams: hands each event from another node to this node's own
 * listeners ({@link LocalDeviceEvents#deliver}, never the cluster's: an event is not passed on, so
 * there are no loops), and each RPC progress report to the waiting caller ({@link RpcCalls}). Every
 * message is answered with a receipt: how many listeners took the event, or 1 if the caller still
 * waited for the report.
 *
 * <p>An RPC offered here gets a {@link RemoteRpcCallback} in place of its caller's callback, which
 * reports every step back to the node the caller is on.
 *
 * <p>A message that cannot be decoded is answered with 0, counted ({@code malformed}) and logged
 * (one WARN per 10 s at most); the stream goes on.
 *
 * <p>Threads: gRPC calls {@code onNext} of one stream serially on the server executor, and the
 * message is handled there, synchronously (listeners and callbacks must not block), so the messages
 * of one sender are handled, and answered, in the order it sent them.
 */
final class EventService extends DeviceEventsGrpc.DeviceEventsImplBase {

  private static final Logger LOG = LoggerFactory.getLogger(EventService.class);

  private final String selfId;
  private final LocalDeviceEvents local;
  private final RpcCalls calls;
  private final EventCodec.RemoteCallbacks callbacks;
  private final ClusterMetrics metrics;
  private final LogThrottle warnings = new LogThrottle();
  // Put before every throttled line; node ids are validated to a safe alphabet (no {}).
  private final String warnPrefix;

  /**
   * @param local this node's listeners
   * @param calls this node's waiting RPC callers
   * @param callbacks builds the callback of an RPC whose caller waits on another node
   */
  EventService(
      String selfId,
      LocalDeviceEvents local,
      RpcCalls calls,
      EventCodec.RemoteCallbacks callbacks,
      ClusterMetrics metrics) {
    this.selfId = selfId;
    this.local = local;
    this.calls = calls;
    this.callbacks = callbacks;
    this.metrics = metrics;
    this.warnPrefix = "[events|" + selfId + "] ";
  }

  @Override
  public StreamObserver<EventEnvelope> exchange(StreamObserver<EventReceipt> receipts) {
    return new StreamObserver<>() {
      @Override
      public void onNext(EventEnvelope envelope) {
        int taken =
            switch (envelope.getBodyCase()) {
              case EVENT -> deliver(envelope.getEvent());
              case PROGRESS -> progress(envelope.getProgress());
              case BODY_NOT_SET -> {
                metrics.eventReceived(EventReceiveOutcome.MALFORMED);
                warnings.warnElseDebug(
                    LOG, warnPrefix + "message {} without a body: ignored", envelope.getSeq());
                yield 0;
              }
            };
        try {
          receipts.onNext(
              EventReceipt.newBuilder().setSeq(envelope.getSeq()).setTaken(taken).build());
        } catch (RuntimeException e) {
          // Cancelled meanwhile: the sender counts the message as failed.
          LOG.debug("[events|{}] receipt not sent: {}", selfId, e.toString());
        }
      }

      @Override
      public void onError(Throwable error) {
        LOG.debug("[events|{}] inbound stream ended: {}", selfId, Status.fromThrowable(error));
      }

      @Override
      public void onCompleted() {
        // Every message was answered in onNext: nothing is outstanding.
        receipts.onCompleted();
      }
    };
  }

  private int deliver(Event message) {
    DeviceEvent event;
    try {
      event = EventCodec.event(message, callbacks);
    } catch (IllegalArgumentException e) {
      metrics.eventReceived(EventReceiveOutcome.MALFORMED);
      warnings.warnElseDebug(
          LOG, warnPrefix + "malformed event ignored: {}", String.valueOf(e.getMessage()));
      return 0;
    }
    int taken = local.deliver(event);
    metrics.eventReceived(taken > 0 ? EventReceiveOutcome.TAKEN : EventReceiveOutcome.NOT_TAKEN);
    return taken;
  }

  private int progress(RpcProgress report) {
    boolean found;
    try {
      found = calls.progress(report);
    } catch (IllegalArgumentException e) {
      metrics.progressReceived(ProgressReceiveOutcome.MALFORMED);
      warnings.warnElseDebug(
          LOG, warnPrefix + "malformed RPC progress ignored: {}", String.valueOf(e.getMessage()));
      return 0;
    }
    if (found) {
      metrics.progressReceived(ProgressReceiveOutcome.DELIVERED);
      return 1;
    }
    metrics.progressReceived(ProgressReceiveOutcome.UNKNOWN_CALL);
    LOG.debug(
        "[events|{}] progress of call {} dropped: its caller no longer waits here",
        selfId,
        report.getCallId());
    return 0;
  }
}
