package io.fieldline.common.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.credentials.DeviceCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** ThingsBoard's provisioning request JSON: its shapes, and what is refused. */
class ProvisionRequestTest {

  private static ProvisionRequest parse(String json) {
    return ProvisionRequest.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void should_read_name_key_and_secret_when_no_credential_is_asked_for() {
    ProvisionRequest request =
        parse(
            "{\"deviceName\":\"  sensor-1 \",\"provisionDeviceKey\":\"k\","
                + "\"provisionDeviceSecret\":\"s\",\"unknown\":42}");

    assertThat(request.deviceName()).isEqualTo("sensor-1");
    assertThat(request.provisionDeviceKey()).isEqualTo("k");
    assertThat(request.provisionDeviceSecret()).isEqualTo("s");
    assertThat(request.hasKeyAndSecret()).isTrue();
    assertThat(request.credentials()).isEmpty();
  }

  @Test
  void should_leave_the_name_to_the_server_when_it_is_absent() {
    ProvisionRequest request =
        parse("{\"provisionDeviceKey\":\"k\",\"provisionDeviceSecret\":\"s\"}");

    assertThat(request.deviceName()).isNull();
  }

  @Test
  void should_not_have_key_and_secret_when_either_is_missing_or_empty() {
    assertThat(parse("{\"provisionDeviceKey\":\"k\"}").hasKeyAndSecret()).isFalse();
    assertThat(parse("{\"provisionDeviceSecret\":\"s\"}").hasKeyAndSecret()).isFalse();
    assertThat(
            parse("{\"provisionDeviceKey\":\"\",\"provisionDeviceSecret\":\"s\"}")
                .hasKeyAndSecret())
        .isFalse();
    assertThat(
            parse("{\"provisionDeviceKey\":null,\"provisionDeviceSecret\":\"s\"}")
                .hasKeyAndSecret())
        .isFalse();
  }

  @Test
  void should_build_an_access_token_when_the_device_sends_one() {
    ProvisionRequest request =
        parse(
            "{\"provisionDeviceKey\":\"k\",\"provisionDeviceSecret\":\"s\","
                + "\"credentialsType\":\"ACCESS_TOKEN\",\"token\":\"my-token\"}");

    assertThat(request.credentials()).contains(new DeviceCredentials.AccessToken("my-token"));
  }

  @Test
  void should_leave_the_token_to_the_server_when_access_token_comes_without_one() {
    assertThat(parse("{\"credentialsType\":\"ACCESS_TOKEN\"}").credentials()).isEmpty();
    assertThat(parse("{\"credentialsType\":\"ACCESS_TOKEN\",\"token\":\"\"}").credentials())
        .isEmpty();
  }

  @Test
  void should_build_mqtt_basic_credentials_when_the_device_sends_them() {
    ProvisionRequest request =
        parse(
            "{\"credentialsType\":\"MQTT_BASIC\",\"clientId\":\"c1\",\"username\":\"u1\","
                + "\"password\":\"p1\"}");

    assertThat(request.credentials()).contains(new DeviceCredentials.MqttBasic("c1", "u1", "p1"));
    assertThat(request.toString()).doesNotContain("p1");
  }

  @Test
  void should_build_a_certificate_when_the_device_sends_its_pem() {
    ProvisionRequest request =
        parse(
            "{\"credentialsType\":\"X509_CERTIFICATE\",\"hash\":"
                + "\""
                + pem("device-a").replace("\n", "\\n")
                + "\"}");

    assertThat(request.credentials())
        .hasValueSatisfying(
            credentials ->
                assertThat(((DeviceCredentials.X509Certificate) credentials).fingerprint())
                    .isEqualTo("b2696423b7b5b02409b37cfbdabe9863151ec3725c337d098a0f90dc9537af13"));
  }

  @Test
  void should_refuse_a_credential_that_is_not_valid_when_it_is_built() {
    assertThatThrownBy(() -> parse("{\"credentialsType\":\"PSK\"}").credentials())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("credentialsType must be");
    assertThatThrownBy(() -> parse("{\"credentialsType\":\"MQTT_BASIC\"}").credentials())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("clientId or a userName");
    assertThatThrownBy(
            () ->
                parse("{\"credentialsType\":\"MQTT_BASIC\",\"clientId\":\"c\",\"password\":\"p\"}")
                    .credentials())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a userName");
    assertThatThrownBy(() -> parse("{\"credentialsType\":\"X509_CERTIFICATE\"}").credentials())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hash");
    assertThatThrownBy(
            () ->
                parse("{\"credentialsType\":\"X509_CERTIFICATE\",\"hash\":\"abc\"}").credentials())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a PEM certificate");
    assertThatThrownBy(
            () -> parse("{\"credentialsType\":\"ACCESS_TOKEN\",\"token\":\"a\\nb\"}").credentials())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("control characters");
  }

  @Test
  void should_refuse_a_payload_that_is_not_a_json_object_when_parsing() {
    assertThatThrownBy(() -> parse("not json"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the request is not valid JSON");
    assertThatThrownBy(() -> parse("[1,2]"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the request must be a JSON object");
    assertThatThrownBy(() -> parse(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the request must be a JSON object");
  }

  @Test
  void should_refuse_a_field_that_is_not_a_string_when_parsing() {
    assertThatThrownBy(() -> parse("{\"deviceName\":12}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("deviceName must be a string");
    assertThatThrownBy(() -> parse("{\"provisionDeviceSecret\":{\"a\":1}}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("provisionDeviceSecret must be a string");
  }

  static String pem(String name) {
    try (InputStream in =
        ProvisionRequestTest.class.getResourceAsStream("/certificates/" + name + ".pem")) {
      return new String(Objects.requireNonNull(in).readAllBytes(), StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
