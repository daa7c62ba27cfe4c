package io.fieldline.common.events;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.List;
import java.util.Objects;

/**
 * Something that happened to a device that the device's subscribers on any node may need: its MQTT
 * session (shared-attribute pushes, server-side RPC) and live WebSocket subscriptions (stored
 * telemetry and attributes). Sent through {@link DeviceEvents}, the one path from "this changed" to
 * "whoever listens to this device hears it", on one node or across a cluster.
 */
public sealed interface DeviceEvent {

  DeviceId deviceId();

  /**
   * Attributes of one scope were stored: {@code SHARED_SCOPE} and {@code SERVER_SCOPE} from REST,
   * {@code CLIENT_SCOPE} from the device (the latter only while someone watches the device's data,
   * see {@link DataWatched}). Published only once the write completed.
   *
   * @param entries the values written, with their update time
   */
  record AttributesUpdated(DeviceId deviceId, AttributeScope scope, List<AttributeKvEntry> entries)
      implements DeviceEvent {
    public AttributesUpdated {
      Objects.requireNonNull(deviceId, "deviceId");
      Objects.requireNonNull(scope, "scope");
      entries = List.copyOf(entries);
    }
  }

  /** Attributes of one scope were deleted. Published only once the delete completed. */
  record AttributesDeleted(DeviceId deviceId, AttributeScope scope, List<String> keys)
      implements DeviceEvent {
    public AttributesDeleted {
      Objects.requireNonNull(deviceId, "deviceId");
      Objects.requireNonNull(scope, "scope");
      keys = List.copyOf(keys);
    }
  }

  /**
   * A server-side RPC offered to the device's sessions. A session that takes it ({@link
   * DeviceEventListener#onEvent} returns true) reports what becomes of it through {@code callback},
   * which may live on another node.
   */
  record RpcRequested(DeviceId deviceId, ToDeviceRpc rpc, RpcCallback callback)
      implements DeviceEvent {
    public RpcRequested {
      Objects.requireNonNull(deviceId, "deviceId");
      Objects.requireNonNull(rpc, "rpc");
      Objects.requireNonNull(callback, "callback");
    }
  }

  /**
   * A session of the device subscribed to server-side RPC ({@code v1/devices/me/rpc/request/+}):
   * requests waiting for the device, on any node, can be offered again.
   */
  record RpcSubscribed(DeviceId deviceId) implements DeviceEvent {
    public RpcSubscribed {
      Objects.requireNonNull(deviceId, "deviceId");
    }
  }

  /**
   * Time-series values of the device were stored (the write its acknowledgement waits for has
   * completed). Published only while someone in the cluster watches the device's data ({@link
   * DataWatched}): for most devices, most of the time, nobody does and nothing is published.
   *
   * @param entries the values written, in the device's order
   */
  record TelemetryStored(DeviceId deviceId, List<TsKvEntry> entries) implements DeviceEvent {
    public TelemetryStored {
      Objects.requireNonNull(deviceId, "deviceId");
      entries = List.copyOf(entries);
    }
  }

  /**
   * A node started ({@code watched}) or stopped watching the device's data (its {@link
   * TelemetryStored} and client {@link AttributesUpdated} events): its first live subscription to
   * the device was opened, or its last closed. Every node keeps who watches what, so the node that
   * stores the device's data publishes it only when someone listens; a node announces its whole set
   * again when the membership changes.
   *
   * @param nodeId the watching node's id
   */
  record DataWatched(DeviceId deviceId, String nodeId, boolean watched) implements DeviceEvent {
    public DataWatched {
      Objects.requireNonNull(deviceId, "deviceId");
      Objects.requireNonNull(nodeId, "nodeId");
    }
  }
}
