package io.fieldline.cluster.forward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.cluster.internal.proto.ForwardReply;
import io.fieldline.cluster.internal.proto.ForwardRequest;
import io.fieldline.cluster.internal.proto.RejectReason;
import io.fieldline.cluster.internal.proto.Rejected;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

class MessageCodecTest {

  private static final DeviceId DEVICE = DeviceId.parse("7c9e6679-7425-40de-944b-e07fc1f90ae7");

  @Test
  void should_decode_the_same_telemetry_when_every_value_type_is_forwarded() throws Exception {
    DeviceMessage message =
        new DeviceMessage.PostTelemetry(
            DEVICE,
            1_700_000_000_123L,
            List.of(
                new TsKvEntry(1L, KvEntry.of("b", true)),
                new TsKvEntry(2L, KvEntry.of("l", Long.MIN_VALUE)),
                new TsKvEntry(3L, KvEntry.of("d", -0.5)),
                new TsKvEntry(4L, KvEntry.of("s", "ünïcode")),
                new TsKvEntry(5L, KvEntry.json("j", "{\"a\":[1,2]}"))));
    ForwardRequest request = MessageCodec.request(7, message);
    ForwardRequest wire = ForwardRequest.parseFrom(request.toByteArray());
    assertThat(wire.getSeq()).isEqualTo(7);
    assertThat(MessageCodec.message(wire)).isEqualTo(message);
  }

  @Test
  void should_decode_the_same_attributes_when_forwarded() {
    DeviceMessage message =
        new DeviceMessage.PostAttributes(
            DEVICE, 42L, List.of(KvEntry.of("firmware", "1.2.3"), KvEntry.of("rssi", -70L)));
    assertThat(MessageCodec.message(MessageCodec.request(1, message))).isEqualTo(message);
  }

  @Test
  void should_reject_the_request_when_it_has_no_body() {
    ForwardRequest empty =
        ForwardRequest.newBuilder().setDeviceId(MessageCodec.uuid(DEVICE)).build();
    assertThatThrownBy(() -> MessageCodec.message(empty))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void should_keep_the_reason_when_an_ack_travels_back() {
    for (Ack.Reason reason : Ack.Reason.values()) {
      Ack ack = Ack.rejected(reason, "because");
      assertThat(MessageCodec.ack(MessageCodec.reply(3, ack))).isEqualTo(ack);
    }
    assertThat(MessageCodec.ack(MessageCodec.reply(3, Ack.stored())).isStored()).isTrue();
  }

  @Test
  void should_never_read_stored_when_the_reply_is_empty_or_unknown() {
    assertThat(MessageCodec.ack(ForwardReply.newBuilder().setSeq(1).build()).isStored()).isFalse();
    ForwardReply unknown =
        ForwardReply.newBuilder().setRejected(Rejected.newBuilder().setReasonValue(99)).build();
    assertThat(MessageCodec.ack(unknown)).isEqualTo(Ack.rejected(Ack.Reason.WRITE_FAILED, ""));
    assertThat(RejectReason.forNumber(99)).isNull();
  }
}
