package io.fieldline.cluster.events;

import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.AttributeEntry;
import io.fieldline.cluster.internal.proto.AttributesDeletedEvent;
import io.fieldline.cluster.internal.proto.AttributesUpdatedEvent;
import io.fieldline.cluster.internal.proto.DataWatchedEvent;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.RpcRequestedEvent;
import io.fieldline.cluster.internal.proto.RpcSubscribedEvent;
import io.fieldline.cluster.internal.proto.Scope;
import io.fieldline.cluster.internal.proto.TelemetryStoredEvent;
import io.fieldline.cluster.internal.proto.TsKeyValue;
import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.ArrayList;
import java.util.List;

/**
 * Device events ↔ the {@code Event} message of {@code fieldline_cluster.proto}. Lossless for every
 * field but one: an {@link DeviceEvent.RpcRequested}'s callback is a local object and does not
 * travel; the origin node's id and the call's id in its table do, and the receiver gives its
 * listeners a callback that reports back there ({@link RemoteCallbacks}). Stateless.
 */
final class EventCodec {

  /** Builds, on the receiving node, the callback of an RPC whose caller waits on another node. */
  @FunctionalInterface
  interface RemoteCallbacks {
    RpcCallback callback(String originNodeId, long callId, ToDeviceRpc rpc);
  }

  private EventCodec() {}

  /**
   * The message for {@code event}.
   *
   * @param originNodeId this node, where the progress of an RPC is to be reported
   * @param callId the RPC's key in this node's table (ignored for other events)
   */
  static Event event(DeviceEvent event, String originNodeId, long callId) {
    Event.Builder message = Event.newBuilder().setDeviceId(MessageCodec.uuid(event.deviceId()));
    // Java 17: no pattern switch; DeviceEvent is sealed to these records.
    if (event instanceof DeviceEvent.AttributesUpdated updated) {
      AttributesUpdatedEvent.Builder body =
          AttributesUpdatedEvent.newBuilder().setScope(scope(updated.scope()));
      for (AttributeKvEntry entry : updated.entries()) {
        body.addEntries(
            AttributeEntry.newBuilder()
                .setLastUpdateTs(entry.lastUpdateTs())
                .setKv(MessageCodec.keyValue(entry.kv())));
      }
      message.setAttributesUpdated(body);
    } else if (event instanceof DeviceEvent.AttributesDeleted deleted) {
      message.setAttributesDeleted(
          AttributesDeletedEvent.newBuilder()
              .setScope(scope(deleted.scope()))
              .addAllKeys(deleted.keys()));
    } else if (event instanceof DeviceEvent.RpcRequested requested) {
      message.setRpcRequested(rpc(requested.rpc(), originNodeId, callId));
    } else if (event instanceof DeviceEvent.RpcSubscribed) {
      message.setRpcSubscribed(RpcSubscribedEvent.getDefaultInstance());
    } else if (event instanceof DeviceEvent.TelemetryStored stored) {
      TelemetryStoredEvent.Builder body = TelemetryStoredEvent.newBuilder();
      for (TsKvEntry entry : stored.entries()) {
        body.addEntries(
            TsKeyValue.newBuilder().setTs(entry.ts()).setKv(MessageCodec.keyValue(entry.kv())));
      }
      message.setTelemetryStored(body);
    } else if (event instanceof DeviceEvent.DataWatched watched) {
      message.setDataWatched(
          DataWatchedEvent.newBuilder().setNodeId(watched.nodeId()).setWatched(watched.watched()));
    } else {
      throw new IllegalArgumentException("unknown event type " + event.getClass());
    }
    return message.build();
  }

  private static RpcRequestedEvent rpc(ToDeviceRpc rpc, String originNodeId, long callId) {
    RpcRequestedEvent.Builder body =
        RpcRequestedEvent.newBuilder()
            .setRpcId(MessageCodec.uuid(rpc.id()))
            .setMethod(rpc.method())
            .setParamsJson(rpc.paramsJson())
            .setOneway(rpc.oneway())
            .setPersistent(rpc.persistent())
            .setTimeoutMillis(rpc.timeoutMillis())
            .setExpirationTime(rpc.expirationTime())
            .setRetries(rpc.retries())
            .setOriginNodeId(originNodeId)
            .setCallId(callId);
    String info = rpc.additionalInfoJson();
    if (info != null) {
      body.setAdditionalInfoJson(info);
    }
    return body.build();
  }

  /**
   * The event a message carries; an RPC's callback comes from {@code callbacks}.
   *
   * @throws IllegalArgumentException if the message is incomplete or a value invalid
   */
  static DeviceEvent event(Event message, RemoteCallbacks callbacks) {
    if (!message.hasDeviceId()) {
      throw new IllegalArgumentException("event without a device id");
    }
    DeviceId device = MessageCodec.deviceId(message.getDeviceId());
    return switch (message.getKindCase()) {
      case ATTRIBUTES_UPDATED -> {
        AttributesUpdatedEvent body = message.getAttributesUpdated();
        List<AttributeKvEntry> entries = new ArrayList<>(body.getEntriesCount());
        for (AttributeEntry entry : body.getEntriesList()) {
          entries.add(
              new AttributeKvEntry(entry.getLastUpdateTs(), MessageCodec.kvEntry(entry.getKv())));
        }
        yield new DeviceEvent.AttributesUpdated(device, scope(body.getScope()), entries);
      }
      case ATTRIBUTES_DELETED ->
          new DeviceEvent.AttributesDeleted(
              device,
              scope(message.getAttributesDeleted().getScope()),
              message.getAttributesDeleted().getKeysList());
      case RPC_REQUESTED -> {
        RpcRequestedEvent body = message.getRpcRequested();
        if (!body.hasRpcId() || body.getOriginNodeId().isEmpty()) {
          throw new IllegalArgumentException("RPC without an id or an origin node");
        }
        ToDeviceRpc rpc =
            new ToDeviceRpc(
                MessageCodec.javaUuid(body.getRpcId()),
                device,
                body.getMethod(),
                body.getParamsJson(),
                body.getOneway(),
                body.getPersistent(),
                body.getTimeoutMillis(),
                body.getExpirationTime(),
                body.getRetries(),
                body.hasAdditionalInfoJson() ? body.getAdditionalInfoJson() : null);
        yield new DeviceEvent.RpcRequested(
            device, rpc, callbacks.callback(body.getOriginNodeId(), body.getCallId(), rpc));
      }
      case RPC_SUBSCRIBED -> new DeviceEvent.RpcSubscribed(device);
      case TELEMETRY_STORED -> {
        List<TsKvEntry> entries = new ArrayList<>(message.getTelemetryStored().getEntriesCount());
        for (TsKeyValue entry : message.getTelemetryStored().getEntriesList()) {
          entries.add(new TsKvEntry(entry.getTs(), MessageCodec.kvEntry(entry.getKv())));
        }
        yield new DeviceEvent.TelemetryStored(device, entries);
      }
      case DATA_WATCHED ->
          new DeviceEvent.DataWatched(
              device, message.getDataWatched().getNodeId(), message.getDataWatched().getWatched());
      case KIND_NOT_SET -> throw new IllegalArgumentException("event without a kind");
    };
  }

  private static Scope scope(AttributeScope scope) {
    return switch (scope) {
      case CLIENT_SCOPE -> Scope.SCOPE_CLIENT;
      case SHARED_SCOPE -> Scope.SCOPE_SHARED;
      case SERVER_SCOPE -> Scope.SCOPE_SERVER;
    };
  }

  private static AttributeScope scope(Scope scope) {
    return switch (scope) {
      case SCOPE_CLIENT -> AttributeScope.CLIENT_SCOPE;
      case SCOPE_SHARED -> AttributeScope.SHARED_SCOPE;
      case SCOPE_SERVER -> AttributeScope.SERVER_SCOPE;
      case SCOPE_UNSPECIFIED, UNRECOGNIZED ->
          throw new IllegalArgumentException("unknown attribute scope " + scope);
    };
  }
}
