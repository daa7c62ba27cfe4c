package io.fieldline.transport.mqtt.gateway;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.transport.common.payload.GatewayPayloadParser;
import io.fieldline.transport.common.payload.GatewayPayloadParser.ChildDevice;
import io.fieldline.transport.common.payload.GatewayPayloadParser.TooManyDevicesException;
import io.fieldline.transport.mqtt.MqttMetrics.GatewayRefusal;
import io.fieldline.transport.mqtt.MqttMetrics.GatewayTopic;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow.AckType;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow.Slot;
import io.fieldline.transport.mqtt.downlink.AttributeReads;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.GatewayTimestamps;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The gateway topics of one gateway's session: {@code v1/gateway/connect}, {@code disconnect},
 * {@code telemetry} and {@code attributes} here, {@code attributes/request} and {@code rpc} through
 * {@link GatewayRequests}. The children the session holds ({@link GatewayChildren}) are those its
 * downlink listens to ({@link Downlink#listen}): their shared attributes and server-side RPC reach
 * the gateway from the moment a message names them until it disconnects them.
 *
 * <p><b>One acknowledgement per PUBLISH, after every child's rows.</b> A telemetry or attributes
 * message is parsed whole first ({@link GatewayPayloadParser}: anything invalid anywhere is a
 * {@code PayloadFormatException}, nothing stored) and checked against the session's bounds (a
 * {@link GatewayRefusedException}, nothing stored). Then each child it names is resolved ({@link
 * GatewayChildren}); if the gateway may not act for one of them the stage fails with a {@link
 * GatewayRefusedException} before anything is submitted (refused whole, as for a bound). Else each
 * child gets one {@code PostTelemetry} / {@code PostAttributes} through the device gateway — its
 * own device actor, on its owner node in a cluster. The stage returned completes with {@link
 * Ack#stored()} once every child's message is stored, or with the first failure: then no PUBACK,
 * and the connection closes as for any failed write (the gateway retransmits the whole message).
 *
 * <p><b>Retransmissions.</b> Values without {@code ts} get the message's receive time, remembered
 * with the session until the message is acknowledged ({@link GatewayTimestamps}), so that the DUP
 * copy a kept session retransmits writes the very same rows again instead of new ones.
 *
 * <p><b>Order.</b> Each child's messages are submitted in the order the gateway published them: a
 * message whose children are still being resolved (looked up, created) holds back the submissions
 * of the messages behind it. With every child known — the steady state — a message is submitted at
 * once.
 *
 * <p>Confined to the channel's event loop: the publish path calls it there, and every completion it
 * acts on comes back there.
 */
public final class GatewayPublishes {

  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

  private final SessionContext context;
  private final EventExecutor eventLoop;
  private final MqttTransportConfig.Gateway bounds;
  private final GatewayPayloadParser parser;
  private final GatewayChildren children;
  private final GatewayRequests requests;
  private final GatewayTimestamps timestamps;
  // Completes once the last message's children have been submitted (never exceptionally).
  private CompletableFuture<Void> submitted = DONE;

  /**
   * The gateway topics of {@code gateway}'s session {@code session}, on {@code connection}.
   *
   * @param gateway a device whose additional info makes it a gateway
   * @param downlink the session's downlink, which listens to the children the session holds
   * @param reads the connection's paced attribute reads
   */
  public GatewayPublishes(
      SessionContext context,
      Connection connection,
      Device gateway,
      SessionState session,
      Downlink downlink,
      AttributeReads reads) {
    this.context = context;
    this.eventLoop = connection.ctx().executor();
    this.bounds = context.config().gateway();
    this.parser = new GatewayPayloadParser(context.parser());
    this.children =
        new GatewayChildren(
            context.registry(),
            gateway,
            context.metrics(),
            bounds,
            context.childCreations(),
            eventLoop,
            () -> connection.ctx().channel().isActive(),
            connection.logPrefix(),
            new GatewayChildren.Turns() {
              @Override
              public void waiting() {
                connection.pause(Pause.GATEWAY_CREATIONS);
              }

              @Override
              public void resumed() {
                connection.resume(Pause.GATEWAY_CREATIONS);
              }
            },
            new GatewayChildren.Watcher() {
              @Override
              public void held(String name, Device child) {
                downlink.listen(name, child.id());
              }

              @Override
              public void released(String name) {
                downlink.forget(name);
              }
            });
    this.requests = new GatewayRequests(context, connection, session, downlink, reads, children);
    // A retransmission follows at most one window of unacknowledged messages; twice that leaves
    // room for the messages of the connection it arrives on.
    this.timestamps = session.gatewayTimestamps(2 * context.config().maxInflight());
  }

  /**
   * {@code v1/gateway/connect}: the child is found or created (with the type sent) and linked to
   * the gateway; acknowledged once it is.
   *
   * @throws io.fieldline.common.kv.PayloadFormatException for an invalid payload
   * @throws GatewayRefusedException when the session holds {@code max-children} children
   */
  public CompletionStage<Ack> connect(byte[] payload) {
    assert eventLoop.inEventLoop();
    context.metrics().gatewayMessage(GatewayTopic.CONNECT);
    ChildDevice child = parser.parseConnect(payload);
    children.checkRoom(List.of(child.name()));
    return children.child(child.name(), child.type()).thenApply(device -> Ack.stored());
  }

  /**
   * {@code v1/gateway/disconnect}: the session lets the child go — nothing more of it is sent to
   * the gateway — acknowledged at once, whether the session held it or not.
   *
   * @throws io.fieldline.common.kv.PayloadFormatException for an invalid payload
   */
  public CompletionStage<Ack> disconnect(byte[] payload) {
    assert eventLoop.inEventLoop();
    context.metrics().gatewayMessage(GatewayTopic.DISCONNECT);
    children.disconnect(parser.parseDisconnect(payload));
    return CompletableFuture.completedFuture(Ack.stored());
  }

  /**
   * {@code v1/gateway/telemetry}: every child's values, acknowledged once all are stored.
   *
   * @param slot the message's place in the acknowledgement window (its packet id, its QoS)
   * @param dup the PUBLISH's DUP flag
   * @param now the receive time
   * @throws io.fieldline.common.kv.PayloadFormatException for an invalid payload
   * @throws GatewayRefusedException when a bound of the session is exceeded
   */
  public CompletionStage<Ack> telemetry(byte[] payload, Slot slot, boolean dup, long now) {
    assert eventLoop.inEventLoop();
    context.metrics().gatewayMessage(GatewayTopic.TELEMETRY);
    long receivedAt = receivedAt(payload, slot, dup, now);
    Map<String, List<TsKvEntry>> byChild;
    try {
      byChild = parser.parseTelemetry(payload, receivedAt, bounds.maxDevicesPerMessage());
    } catch (TooManyDevicesException e) {
      throw new GatewayRefusedException(
          GatewayRefusal.TOO_MANY_DEVICES, String.valueOf(e.getMessage()));
    }
    return store(
        byChild,
        GatewayTopic.TELEMETRY,
        (child, entries) -> new DeviceMessage.PostTelemetry(child, receivedAt, entries));
  }

  /**
   * {@code v1/gateway/attributes}: every child's client-side attributes, acknowledged once all are
   * stored.
   *
   * @see #telemetry
   */
  public CompletionStage<Ack> attributes(byte[] payload, Slot slot, boolean dup, long now) {
    assert eventLoop.inEventLoop();
    context.metrics().gatewayMessage(GatewayTopic.ATTRIBUTES);
    long receivedAt = receivedAt(payload, slot, dup, now);
    Map<String, List<KvEntry>> byChild;
    try {
      byChild = parser.parseAttributes(payload, bounds.maxDevicesPerMessage());
    } catch (TooManyDevicesException e) {
      throw new GatewayRefusedException(
          GatewayRefusal.TOO_MANY_DEVICES, String.valueOf(e.getMessage()));
    }
    return store(
        byChild,
        GatewayTopic.ATTRIBUTES,
        (child, entries) -> new DeviceMessage.PostAttributes(child, receivedAt, entries));
  }

  /**
   * {@code v1/gateway/attributes/request}: acknowledged once the child is resolved; the answer
   * follows on {@code v1/gateway/attributes/response} ({@link GatewayRequests}).
   *
   * @throws io.fieldline.common.kv.PayloadFormatException for an invalid payload
   * @throws GatewayRefusedException when the session holds {@code max-children} children
   */
  public CompletionStage<Ack> attributesRequest(byte[] payload) {
    assert eventLoop.inEventLoop();
    context.metrics().gatewayMessage(GatewayTopic.ATTRIBUTES_REQUEST);
    return requests.attributesRequest(payload);
  }

  /**
   * {@code v1/gateway/rpc}: a child's answer to a server-side RPC, acknowledged once the child is
   * resolved ({@link GatewayRequests}).
   *
   * @throws io.fieldline.common.kv.PayloadFormatException for an invalid payload
   * @throws GatewayRefusedException when the session holds {@code max-children} children
   */
  public CompletionStage<Ack> rpc(byte[] payload) {
    assert eventLoop.inEventLoop();
    context.metrics().gatewayMessage(GatewayTopic.RPC);
    return requests.rpcAnswer(payload);
  }

  /** The acknowledgement of {@code slot} was sent: its message will not come again. */
  public void acknowledged(Slot slot) {
    if (slot.ackType() != AckType.NONE) {
      timestamps.forget(slot.packetId());
    }
  }

  // QoS 0 is never retransmitted: nothing to remember.
  private long receivedAt(byte[] payload, Slot slot, boolean dup, long now) {
    if (slot.ackType() == AckType.NONE) {
      return now;
    }
    GatewayTimestamps.Stamp stamp = timestamps.stamp(slot.packetId(), dup, payload, now);
    if (stamp.reused()) {
      context.metrics().gatewayTimestampsReused();
    }
    return stamp.receivedAt();
  }

  private <V> CompletionStage<Ack> store(
      Map<String, List<V>> byChild,
      GatewayTopic topic,
      BiFunction<DeviceId, List<V>, DeviceMessage> message) {
    // Names and values side by side, in payload order: each child's values are at its index.
    List<String> names = new ArrayList<>(byChild.size());
    List<List<V>> values = new ArrayList<>(byChild.size());
    for (Map.Entry<String, List<V>> child : byChild.entrySet()) {
      names.add(child.getKey());
      values.add(child.getValue());
    }
    children.checkRoom(names);
    List<CompletableFuture<Device>> resolving = new ArrayList<>(names.size());
    for (String name : names) {
      resolving.add(children.child(name, "default"));
    }
    CompletableFuture<Void> resolved =
        CompletableFuture.allOf(resolving.toArray(new CompletableFuture<?>[0]));
    Function<Object, CompletionStage<Ack>> submit =
        ready -> submitAll(resolving, values, topic, message);
    CompletableFuture<CompletionStage<Ack>> submission;
    if (submitted.isDone() && resolved.isDone() && !resolved.isCompletedExceptionally()) {
      submission = CompletableFuture.completedFuture(submit.apply(null));
    } else {
      submission =
          submitted.thenCombineAsync(resolved, (previous, ready) -> submit.apply(ready), eventLoop);
    }
    submitted = submission.handle((ignored, error) -> null);
    return submission.thenCompose(Function.identity());
  }

  // On the event loop, every child resolved; childValues.get(i) is the values of resolving.get(i).
  private <V> CompletionStage<Ack> submitAll(
      List<CompletableFuture<Device>> resolving,
      List<List<V>> childValues,
      GatewayTopic topic,
      BiFunction<DeviceId, List<V>, DeviceMessage> message) {
    List<CompletableFuture<Ack>> writes = new ArrayList<>(childValues.size());
    int points = 0;
    for (int i = 0; i < childValues.size(); i++) {
      List<V> values = childValues.get(i);
      if (values.isEmpty()) {
        continue; // the child exists now; nothing to write
      }
      DeviceId child = resolving.get(i).join().id();
      CompletionStage<Ack> write;
      try {
        write = context.gateway().submit(message.apply(child, values));
      } catch (RuntimeException e) {
        write = CompletableFuture.failedFuture(e);
      }
      writes.add(write.toCompletableFuture());
      points += values.size();
    }
    int stored = points;
    return allStored(writes)
        .thenApply(
            ack -> {
              if (ack.isStored()) {
                context.metrics().gatewayPointsStored(topic, stored);
              }
              return ack;
            });
  }

  /** Stored once every write is; otherwise the first refusal or failure, without waiting. */
  private static CompletableFuture<Ack> allStored(List<CompletableFuture<Ack>> writes) {
    if (writes.isEmpty()) {
      return CompletableFuture.completedFuture(Ack.stored());
    }
    CompletableFuture<Ack> all = new CompletableFuture<>();
    AtomicInteger pending = new AtomicInteger(writes.size());
    for (CompletableFuture<Ack> write : writes) {
      write.whenComplete(
          (ack, error) -> {
            if (error != null) {
              all.completeExceptionally(BoundedCalls.unwrapped(error));
            } else if (!ack.isStored()) {
              all.complete(ack);
            } else if (pending.decrementAndGet() == 0) {
              all.complete(Ack.stored());
            }
          });
    }
    return all;
  }
}
