package io.fieldline.transport.mqtt.ack;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.ack.OrderedAckWindow.AckType;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow.Slot;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OrderedAckWindowTest {

  /** Records what the window emits, as "ack:<id>" and "failed:<id>". */
  private static final class RecordingSink implements OrderedAckWindow.Sink {
    final List<String> events = new ArrayList<>();

    @Override
    public void acknowledge(Slot slot) {
      events.add("ack:" + slot.packetId());
    }

    @Override
    public void failed(Slot slot) {
      events.add("failed:" + slot.packetId());
    }
  }

  private final OrderedAckWindow window = new OrderedAckWindow();
  private final RecordingSink sink = new RecordingSink();

  @Test
  void should_emit_nothing_when_head_is_pending() {
    window.register(1, AckType.PUBACK, 0);
    Slot second = window.register(2, AckType.PUBACK, 0);

    window.complete(second);

    assertThat(window.drain(sink)).isFalse();
    assertThat(sink.events).isEmpty();
    assertThat(window.size()).isEqualTo(2);
  }

  @Test
  void should_emit_acks_in_arrival_order_when_completed_out_of_order() {
    Slot first = window.register(1, AckType.PUBACK, 0);
    Slot second = window.register(2, AckType.PUBACK, 0);
    Slot third = window.register(3, AckType.PUBACK, 0);

    window.complete(third);
    window.drain(sink);
    window.complete(first);
    window.drain(sink);
    assertThat(sink.events).containsExactly("ack:1");

    window.complete(second);
    assertThat(window.drain(sink)).isTrue();
    assertThat(sink.events).containsExactly("ack:1", "ack:2", "ack:3");
    assertThat(window.isEmpty()).isTrue();
  }

  @Test
  void should_report_failure_only_after_earlier_slots_are_acknowledged() {
    Slot first = window.register(1, AckType.PUBACK, 0);
    Slot second = window.register(2, AckType.PUBACK, 0);
    Slot third = window.register(3, AckType.PUBACK, 0);

    window.fail(second);
    window.complete(third);
    window.drain(sink);
    assertThat(sink.events).isEmpty();

    window.complete(first);
    window.drain(sink);
    assertThat(sink.events).containsExactly("ack:1", "failed:2");
    // The failed slot and everything behind it stay unanswered.
    assertThat(window.size()).isEqualTo(2);
  }

  @Test
  void should_ignore_completion_when_slot_already_failed() {
    Slot first = window.register(1, AckType.PUBACK, 0);

    window.fail(first);
    window.complete(first);
    window.drain(sink);

    assertThat(sink.events).containsExactly("failed:1");
    assertThat(first.isPending()).isFalse();
  }

  @Test
  void should_hold_qos0_slot_without_emitting_when_ack_type_is_none() {
    Slot qos0 = window.register(-1, AckType.NONE, 0);
    Slot qos1 = window.register(7, AckType.PUBACK, 0);
    assertThat(window.size()).isEqualTo(2);

    window.complete(qos1);
    window.drain(sink);
    assertThat(sink.events).isEmpty();
    assertThat(window.size()).isEqualTo(2);

    window.complete(qos0);
    assertThat(window.drain(sink)).isTrue();
    assertThat(sink.events).containsExactly("ack:7");
    assertThat(window.size()).isZero();
  }

  @Test
  void should_report_progress_when_only_qos0_slots_leave() {
    window.complete(window.register(-1, AckType.NONE, 0));

    assertThat(window.drain(sink)).isTrue();
    assertThat(sink.events).isEmpty();
    assertThat(window.isEmpty()).isTrue();
  }

  @Test
  void should_keep_pubrec_type_when_qos2_slot_is_acknowledged() {
    List<AckType> types = new ArrayList<>();
    window.complete(window.register(5, AckType.PUBREC, 42L));

    window.drain(
        new OrderedAckWindow.Sink() {
          @Override
          public void acknowledge(Slot slot) {
            types.add(slot.ackType());
            assertThat(slot.receivedNanos()).isEqualTo(42L);
          }

          @Override
          public void failed(Slot slot) {
            types.add(null);
          }
        });

    assertThat(types).containsExactly(AckType.PUBREC);
  }

  @Test
  void should_count_every_registered_slot_until_it_is_drained() {
    List<Slot> slots = new ArrayList<>();
    for (int id = 1; id <= 5; id++) {
      slots.add(window.register(id, AckType.PUBACK, 0));
    }
    assertThat(window.size()).isEqualTo(5);

    slots.forEach(window::complete);
    assertThat(window.size()).as("completion alone does not shrink the window").isEqualTo(5);

    window.drain(sink);
    assertThat(window.size()).isZero();
    assertThat(sink.events).containsExactly("ack:1", "ack:2", "ack:3", "ack:4", "ack:5");
  }
}
