package io.fieldline.perf.mqtt;

import static io.fieldline.perf.mqtt.MqttDsl.mqtt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class MqttProtocolTest {

  @Test
  void should_send_every_user_to_the_one_port_when_a_single_port_is_given() {
    MqttProtocol protocol = mqtt().port(1884).settings();

    assertThat(protocol.ports()).containsExactly(1884);
    assertThat(protocol.portIndex(1)).isZero();
    assertThat(protocol.portIndex(2)).isZero();
    assertThat(protocol.portIndex(12_345)).isZero();
  }

  @Test
  void should_spread_users_round_robin_over_several_ports() {
    MqttProtocol protocol = mqtt().ports(List.of(1883, 1884)).settings();

    int[] perPort = new int[2];
    for (long user = 1; user <= 1_000; user++) {
      perPort[protocol.portIndex(user)]++;
    }

    assertThat(protocol.portIndex(1)).isEqualTo(1);
    assertThat(protocol.portIndex(2)).isZero();
    assertThat(perPort).containsExactly(500, 500);
  }

  @Test
  void should_keep_the_ports_when_other_settings_change() {
    MqttProtocol protocol =
        mqtt().ports(List.of(1883, 1884, 1885)).keepAlive(30).host("localhost").settings();

    assertThat(protocol.ports()).containsExactly(1883, 1884, 1885);
    assertThat(protocol.portIndex(5)).isEqualTo(2);
  }

  @Test
  void should_reject_no_ports_or_a_port_out_of_range() {
    assertThatThrownBy(() -> mqtt().ports(List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least one port");
    assertThatThrownBy(() -> mqtt().ports(List.of(1883, 70_000)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("70000");
  }

  @Test
  void should_give_each_of_n_source_addresses_to_every_nth_user_and_none_by_default() {
    MqttProtocol protocol = mqtt().sourceAddresses(300).keepAlive(30).settings();

    assertThat(mqtt().settings().sourceAddress(7)).isNull();
    assertThat(protocol.sourceAddress(0).getHostAddress()).isEqualTo("127.1.0.1");
    assertThat(protocol.sourceAddress(249).getHostAddress()).isEqualTo("127.1.0.250");
    assertThat(protocol.sourceAddress(250).getHostAddress()).isEqualTo("127.1.1.1");
    assertThat(protocol.sourceAddress(300)).isEqualTo(protocol.sourceAddress(0));
    assertThat(
            java.util.stream.LongStream.range(0, 3_000)
                .mapToObj(protocol::sourceAddress)
                .distinct()
                .count())
        .isEqualTo(300);
  }

  @Test
  void should_reject_more_source_addresses_than_the_loopback_range_gives() {
    assertThatThrownBy(() -> mqtt().sourceAddresses(MqttProtocol.MAX_SOURCE_ADDRESSES + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sourceAddresses");
  }
}
