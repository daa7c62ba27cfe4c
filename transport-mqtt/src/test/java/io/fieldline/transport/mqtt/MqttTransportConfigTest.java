package io.fieldline.transport.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MqttTransportConfigTest {

  private static MqttTransportConfig parse(String hocon) {
    return MqttTransportConfig.from(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  @Test
  void should_read_documented_defaults_when_only_reference_conf_is_present() {
    MqttTransportConfig config = MqttTransportConfig.from(ConfigFactory.defaultReference());

    assertThat(config)
        .isEqualTo(
            new MqttTransportConfig(
                "0.0.0.0",
                1883,
                0,
                65536,
                256,
                15000,
                Duration.ofSeconds(10),
                2000,
                500,
                2000,
                20,
                Duration.ofSeconds(1),
                100_000,
                100,
                50,
                1000,
                65536,
                32768,
                Duration.ofSeconds(30),
                10,
                20,
                10,
                20,
                100,
                16384,
                Duration.ofHours(1),
                Duration.ofMinutes(10),
                16,
                InvalidPayloadPolicy.DEAD_LETTER,
                new MqttTransportConfig.Downlink(100, 262_144, 16, Duration.ofSeconds(10), 100),
                new MqttTransportConfig.Tls(
                    8883, "", "", Duration.ofSeconds(30), true, MqttTransportConfig.Provider.AUTO),
                new MqttTransportConfig.Gateway(
                    10_000, 1_000, 8, 100, 100, 1000, 1_048_576, 1000, false, 2)));
    assertThat(config.tls().enabled()).isFalse();
  }

  @Test
  void should_give_a_gateways_session_its_own_holds_and_the_downlinks_window() {
    MqttTransportConfig config =
        parse(
            "fieldline.mqtt { downlink.max-inflight = 7, gateway { max-queued = 5,"
                + " max-queued-bytes = 2 KiB, max-pending-rpc = 3 } }");

    assertThat(config.gateway().downlink(config.downlink()))
        .isEqualTo(
            new MqttTransportConfig.Downlink(
                5, 2048, 7, config.downlink().retransmitInterval(), 3));
  }

  @Test
  void should_refuse_a_tls_certificate_without_its_key() {
    assertThatThrownBy(() -> parse("fieldline.mqtt.tls { cert = \"/etc/cert.pem\" }"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tls.cert and tls.key go together");
  }

  @Test
  void should_apply_override_when_key_is_set() {
    MqttTransportConfig config =
        parse(
            "fieldline.mqtt { port = 0, max-packet-size = 64 KiB, connect-timeout = 250 ms,"
                + " max-inflight = 4, inflight-low-water = 2 }");

    assertThat(config.port()).isZero();
    assertThat(config.maxPacketSize()).isEqualTo(65536);
    assertThat(config.connectTimeout()).isEqualTo(Duration.ofMillis(250));
    assertThat(config.maxInflight()).isEqualTo(4);
    assertThat(config.inflightLowWater()).isEqualTo(2);
  }

  @Test
  void should_report_every_error_when_several_values_are_invalid() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                parse(
                    "fieldline.mqtt { port = 70000, max-inflight = 0, max-packet-size = 10,"
                        + " max-client-id-length = 5, max-connections = 0, connect-timeout = 0 s,"
                        + " invalid-payload = drop }"))
        .withMessageContaining("fieldline.mqtt.port: must be 0..65535, got 70000")
        .withMessageContaining("fieldline.mqtt.max-inflight: must be 1..65535, got 0")
        .withMessageContaining("inflight-low-water")
        .withMessageContaining("max-packet-size")
        .withMessageContaining("max-client-id-length")
        .withMessageContaining("max-connections")
        .withMessageContaining("connect-timeout")
        .withMessageContaining(
            "fieldline.mqtt.invalid-payload: must be one of dead-letter, close, got 'drop'");
  }

  @Test
  void should_report_type_errors_with_other_errors_when_values_have_wrong_type() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                parse(
                    "fieldline.mqtt { port = eighty, session-expiry = soon,"
                        + " max-inflight = 0 }"))
        .withMessageContaining("port")
        .withMessageContaining("session-expiry")
        .withMessageContaining("fieldline.mqtt.max-inflight: must be 1..65535, got 0");
  }

  @Test
  void should_reject_max_packet_size_when_it_overflows_an_int() {
    // 4 GiB + 100 bytes would silently become 100 bytes if truncated to an int.
    assertThatIllegalArgumentException()
        .isThrownBy(() -> parse("fieldline.mqtt.max-packet-size = 4294967396"))
        .withMessageContaining("max-packet-size");
  }

  @Test
  void should_reject_low_water_when_it_is_not_below_max_inflight() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> parse("fieldline.mqtt { max-inflight = 4, inflight-low-water = 4 }"))
        .withMessageContaining(
            "fieldline.mqtt.inflight-low-water: must be >= 0 and < max-inflight, got 4");
  }

  @Test
  void should_read_pre_authentication_limits_when_they_are_set() {
    MqttTransportConfig config =
        parse(
            "fieldline.mqtt { max-unauthenticated-connections = 5, per-address-connection-rate = 0,"
                + " per-address-connection-burst = 3, per-address-failed-auth-burst = 2,"
                + " per-address-failed-auth-refill = 250 ms, per-address-table-size = 7 }");

    assertThat(config.maxUnauthenticatedConnections()).isEqualTo(5);
    assertThat(config.perAddressConnectionRate()).isZero();
    assertThat(config.perAddressConnectionBurst()).isEqualTo(3);
    assertThat(config.perAddressFailedAuthBurst()).isEqualTo(2);
    assertThat(config.perAddressFailedAuthRefill()).isEqualTo(Duration.ofMillis(250));
    assertThat(config.perAddressTableSize()).isEqualTo(7);
  }

  @Test
  void should_report_every_pre_authentication_error_when_values_are_invalid() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                parse(
                    "fieldline.mqtt { max-unauthenticated-connections = 0,"
                        + " per-address-connection-rate = -1, per-address-connection-burst = 0,"
                        + " per-address-failed-auth-burst = -1,"
                        + " per-address-failed-auth-refill = 0 s, per-address-table-size = 0 }"))
        .withMessageContaining("max-unauthenticated-connections")
        .withMessageContaining("per-address-connection-rate")
        .withMessageContaining("per-address-connection-burst")
        .withMessageContaining("per-address-failed-auth-burst")
        .withMessageContaining("per-address-failed-auth-refill")
        .withMessageContaining("per-address-table-size");
  }

  @Test
  void should_report_every_connection_bound_error_when_values_are_invalid() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                parse(
                    "fieldline.mqtt { max-awaiting-release = 0, outbound-high-water = 512,"
                        + " outbound-low-water = 1 KiB, outbound-stall-timeout = 0 s,"
                        + " client-rpc-rate = -1, client-rpc-burst = 0, max-read-size = 32 }"))
        .withMessageContaining("max-awaiting-release")
        .withMessageContaining("outbound-high-water")
        .withMessageContaining("outbound-low-water")
        .withMessageContaining("outbound-stall-timeout")
        .withMessageContaining("client-rpc-rate")
        .withMessageContaining("client-rpc-burst")
        .withMessageContaining("max-read-size");
  }

  @Test
  void should_reject_outbound_low_water_when_it_is_not_below_high_water() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                parse("fieldline.mqtt { outbound-high-water = 8 KiB, outbound-low-water = 8 KiB }"))
        .withMessageContaining("outbound-low-water: must be below outbound-high-water");
  }

  @ParameterizedTest
  @CsvSource({
    "dead-letter, DEAD_LETTER",
    "close, CLOSE",
    "CLOSE, CLOSE",
    "' Dead-Letter ', DEAD_LETTER"
  })
  void should_parse_policy_when_value_is_a_known_spelling(
      String value, InvalidPayloadPolicy expected) {
    assertThat(parse("fieldline.mqtt.invalid-payload = \"" + value + "\"").invalidPayload())
        .isEqualTo(expected);
  }

  @Test
  void should_change_only_the_listeners_when_copied_for_the_loopback() {
    MqttTransportConfig config =
        parse(
            "fieldline.mqtt { max-inflight = 90, host = \"0.0.0.0\", port = 1884,"
                + " tls { port = 8884, cert = \"/etc/cert.pem\", key = \"/etc/key.pem\" } }");

    MqttTransportConfig copy = config.loopbackOnly();

    assertThat(copy.host()).isEqualTo("127.0.0.1");
    assertThat(copy.port()).isZero();
    assertThat(copy.tls().enabled()).isFalse();
    assertThat(copy)
        .usingRecursiveComparison()
        .ignoringFields("host", "port", "tls")
        .isEqualTo(config);
  }
}
