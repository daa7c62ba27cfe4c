package io.fieldline.cluster.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.cluster.internal.proto.AttributesUpdatedEvent;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.Scope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Every device event survives the trip through protobuf; broken messages are refused. */
class EventCodecTest {

  private static final DeviceId DEVICE = DeviceId.parse("7c9e6679-7425-40de-944b-e07fc1f90ae7");

  private final List<String> callbacksBuilt = new ArrayList<>();
  private final RpcCallback proxy = new RecordingCallback();

  private DeviceEvent roundTrip(DeviceEvent event, long callId) throws Exception {
    byte[] wire = EventCodec.event(event, "node-a", callId).toByteArray();
    return EventCodec.event(
        Event.parseFrom(wire),
        (origin, id, rpc) -> {
          callbacksBuilt.add(origin + "#" + id + "#" + rpc.id());
          return proxy;
        });
  }

  @Test
  void should_keep_every_value_type_and_update_time_when_attributes_are_updated() throws Exception {
    DeviceEvent event =
        new DeviceEvent.AttributesUpdated(
            DEVICE,
            AttributeScope.SHARED_SCOPE,
            List.of(
                new AttributeKvEntry(1L, KvEntry.of("b", true)),
                new AttributeKvEntry(2L, KvEntry.of("l", Long.MIN_VALUE)),
                new AttributeKvEntry(3L, KvEntry.of("d", -0.5)),
                new AttributeKvEntry(4L, KvEntry.of("s", "text with {} and ünïcode")),
                new AttributeKvEntry(5L, KvEntry.json("j", "{\"a\":[1,2]}"))));

    assertThat(roundTrip(event, 0)).isEqualTo(event);
  }

  @Test
  void should_keep_timestamps_and_values_in_order_when_telemetry_was_stored() throws Exception {
    DeviceEvent event =
        new DeviceEvent.TelemetryStored(
            DEVICE,
            List.of(
                new TsKvEntry(1_700_000_000_002L, KvEntry.of("t", 21.5)),
                new TsKvEntry(1_700_000_000_001L, KvEntry.of("t", 21L)),
                new TsKvEntry(1_700_000_000_001L, KvEntry.json("j", "{\"a\":1}"))));

    assertThat(roundTrip(event, 0)).isEqualTo(event);
  }

  @Test
  void should_keep_the_node_and_both_directions_when_data_is_watched() throws Exception {
    for (boolean watched : new boolean[] {true, false}) {
      DeviceEvent event = new DeviceEvent.DataWatched(DEVICE, "node-b", watched);
      assertThat(roundTrip(event, 0)).isEqualTo(event);
    }
  }

  @Test
  void should_keep_scope_and_keys_when_attributes_are_deleted() throws Exception {
    for (AttributeScope scope : AttributeScope.values()) {
      DeviceEvent event = new DeviceEvent.AttributesDeleted(DEVICE, scope, List.of("x", "y"));
      assertThat(roundTrip(event, 0)).isEqualTo(event);
    }
  }

  @Test
  void should_keep_the_rpc_and_build_a_callback_to_the_origin_when_an_rpc_is_requested()
      throws Exception {
    ToDeviceRpc rpc =
        new ToDeviceRpc(
            UUID.randomUUID(),
            DEVICE,
            "reboot",
            "{}",
            true,
            true,
            30_000,
            1_900_000_000_000L,
            3,
            "{\"note\":1}");
    ToDeviceRpc noInfo =
        new ToDeviceRpc(UUID.randomUUID(), DEVICE, "get", "{\"k\":1}", false, false, 1, 0, 0, null);

    DeviceEvent decoded =
        roundTrip(new DeviceEvent.RpcRequested(DEVICE, rpc, new RecordingCallback()), 42);
    DeviceEvent decodedNoInfo =
        roundTrip(new DeviceEvent.RpcRequested(DEVICE, noInfo, new RecordingCallback()), -7);

    assertThat(decoded).isEqualTo(new DeviceEvent.RpcRequested(DEVICE, rpc, proxy));
    assertThat(decodedNoInfo).isEqualTo(new DeviceEvent.RpcRequested(DEVICE, noInfo, proxy));
    assertThat(callbacksBuilt).containsExactly("node-a#42#" + rpc.id(), "node-a#-7#" + noInfo.id());
  }

  @Test
  void should_keep_the_device_when_a_session_subscribed_to_rpc() throws Exception {
    DeviceEvent event = new DeviceEvent.RpcSubscribed(DEVICE);
    assertThat(roundTrip(event, 0)).isEqualTo(event);
  }

  @Test
  void should_refuse_a_message_when_it_is_incomplete() {
    Event subscribed = EventCodec.event(new DeviceEvent.RpcSubscribed(DEVICE), "a", 0);
    ToDeviceRpc rpc =
        new ToDeviceRpc(UUID.randomUUID(), DEVICE, "m", "{}", true, false, 5, 0, 0, null);
    Event requested = EventCodec.event(new DeviceEvent.RpcRequested(DEVICE, rpc, proxy), "a", 1);
    List<Event> broken =
        List.of(
            subscribed.toBuilder().clearKind().build(),
            subscribed.toBuilder().clearDeviceId().build(),
            subscribed.toBuilder()
                .setAttributesUpdated(
                    AttributesUpdatedEvent.newBuilder().setScope(Scope.SCOPE_UNSPECIFIED))
                .build(),
            requested.toBuilder()
                .setRpcRequested(requested.getRpcRequested().toBuilder().setTimeoutMillis(0))
                .build(),
            requested.toBuilder()
                .setRpcRequested(requested.getRpcRequested().toBuilder().clearOriginNodeId())
                .build());

    for (Event message : broken) {
      assertThatThrownBy(() -> EventCodec.event(message, (origin, id, r) -> proxy))
          .as("%s", message)
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(callbacksBuilt).isEmpty();
  }
}
