package io.fieldline.transport.mqtt.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.testkit.RecordingRpcCallback;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The hand-over of what a session holds for its device between its connections. */
class DownlinkStateTest {

  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final MqttMetrics metrics = new MqttMetrics(meters);

  /** A holder that records what it was handed. */
  private static final class Recorder implements DownlinkState.Holder {
    final List<DownlinkMessage> adopted = new ArrayList<>();

    @Override
    public void adopt(List<DownlinkMessage> messages) {
      adopted.addAll(messages);
    }
  }

  private static DownlinkMessage push(int qos) {
    return new DownlinkMessage(
        "v1/devices/me/attributes", "{\"a\":1}".getBytes(StandardCharsets.UTF_8), qos, null);
  }

  private static DownlinkMessage request(int qos, RecordingRpcCallback callback) {
    DeviceId device = DeviceId.random();
    ToDeviceRpc rpc =
        new ToDeviceRpc(UUID.randomUUID(), device, "m", "{}", false, false, 1_000, 0, 0, null);
    return new DownlinkMessage(
        "v1/devices/me/rpc/request/1", new byte[2], qos, new RpcDelivery(1, rpc, callback));
  }

  private static DownlinkMessage held(DownlinkState state, DownlinkMessage message) {
    assertThat(state.tryHold(message, 100, 1 << 20)).isTrue();
    return message;
  }

  @Test
  void should_keep_qos1_and_give_up_qos0_messages_of_a_kept_session() {
    DownlinkState state = new DownlinkState(true);
    Recorder first = new Recorder();
    state.attach(first, metrics);
    RecordingRpcCallback qos0 = new RecordingRpcCallback();
    DownlinkMessage kept = held(state, push(1));
    DownlinkMessage lost = held(state, request(0, qos0));

    state.detach(first, List.of(kept, lost));

    assertThat(qos0.calls())
        .containsExactly("undelivered:the connection closed before it was delivered");
    assertThat(state.heldCount()).isOne();
    assertThat(state.attach(new Recorder(), metrics)).containsExactly(kept);
  }

  @Test
  void should_give_up_everything_of_a_session_that_is_not_kept() {
    DownlinkState state = new DownlinkState(false);
    Recorder first = new Recorder();
    state.attach(first, metrics);
    RecordingRpcCallback callback = new RecordingRpcCallback();

    state.detach(first, List.of(held(state, push(1)), held(state, request(1, callback))));

    assertThat(state.heldCount()).isZero();
    assertThat(callback.calls()).hasSize(1).first().asString().startsWith("undelivered:");
    assertThat(meters.get("fieldline.mqtt.downlink").tag("outcome", "discarded").counter().count())
        .isEqualTo(2);
    assertThat(meters.get("fieldline.mqtt.downlink.held").gauge().value()).isZero();
  }

  @Test
  void should_hand_messages_to_a_newer_holder_that_attached_before_the_older_one_left() {
    DownlinkState state = new DownlinkState(true);
    Recorder older = new Recorder();
    Recorder newer = new Recorder();
    state.attach(older, metrics);
    DownlinkMessage message = held(state, push(0));
    state.attach(newer, metrics); // a takeover racing the older connection's close

    state.detach(older, List.of(message));

    assertThat(newer.adopted).containsExactly(message);
    assertThat(state.heldCount()).isOne();
  }

  @Test
  void should_report_each_kept_request_undelivered_once_when_the_session_ends() {
    DownlinkState state = new DownlinkState(true);
    Recorder holder = new Recorder();
    state.attach(holder, metrics);
    RecordingRpcCallback callback = new RecordingRpcCallback();
    DownlinkMessage message = held(state, request(1, callback));
    state.detach(holder, List.of(message));

    state.end();
    state.giveUp(message, MqttMetrics.DownlinkOutcome.DISCARDED, "again");

    assertThat(callback.calls())
        .containsExactly("undelivered:the session ended before it was delivered");
    assertThat(state.tryHold(push(1), 100, 1 << 20)).as("an ended session takes nothing").isFalse();
  }

  @Test
  void should_bound_the_messages_and_bytes_held() {
    DownlinkState state = new DownlinkState(true);
    state.attach(new Recorder(), metrics);
    DownlinkMessage message = push(1); // 7 payload + 24 topic bytes

    assertThat(state.tryHold(message, 2, 62)).isTrue();
    assertThat(state.tryHold(push(1), 2, 62)).isTrue();
    assertThat(state.tryHold(push(1), 3, 62)).as("bytes").isFalse();
    assertThat(state.tryHold(push(1), 2, 1_000)).as("count").isFalse();
    state.release(message);
    assertThat(state.tryHold(push(1), 2, 62)).isTrue();
  }
}
