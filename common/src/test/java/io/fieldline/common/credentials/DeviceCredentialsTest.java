package io.fieldline.common.credentials;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * The validation of each credential type. The certificates under {@code certificates/} were made
 * with {@code openssl req -x509 -newkey ec} (a and b self-signed, c signed by a test CA); their
 * fingerprints are what {@code openssl x509 -noout -fingerprint -sha256} prints.
 */
class DeviceCredentialsTest {

  static String pem(String name) {
    try (InputStream in =
        DeviceCredentialsTest.class.getResourceAsStream("/certificates/" + name + ".pem")) {
      return new String(Objects.requireNonNull(in).readAllBytes(), StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void should_find_the_openssl_fingerprint_when_a_certificate_is_parsed() {
    var certificate = DeviceCredentials.X509Certificate.parse(pem("device-a"));

    assertThat(certificate.fingerprint())
        .isEqualTo("b2696423b7b5b02409b37cfbdabe9863151ec3725c337d098a0f90dc9537af13");
    assertThat(certificate.pem()).startsWith("-----BEGIN CERTIFICATE-----\n").endsWith("-----\n");
    assertThat(DeviceCredentials.X509Certificate.parse(pem("device-c-ca-signed")).fingerprint())
        .isEqualTo("d44f10365ee16c530d490085bf9eba8f0a6581566147e3f0a3b7320affb3152a");
  }

  @Test
  void should_accept_the_bare_base64_body_when_the_pem_lines_are_missing() {
    String bare =
        pem("device-a")
            .replace("-----BEGIN CERTIFICATE-----", "")
            .replace("-----END CERTIFICATE-----", "")
            .replace("\n", "");

    assertThat(DeviceCredentials.X509Certificate.parse(bare))
        .isEqualTo(DeviceCredentials.X509Certificate.parse(pem("device-a")));
  }

  @Test
  void should_reject_garbage_and_chains_when_parsing_a_certificate() {
    assertThatThrownBy(() -> DeviceCredentials.X509Certificate.parse("not a certificate"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a PEM certificate");
    assertThatThrownBy(
            () -> DeviceCredentials.X509Certificate.parse(pem("device-a") + pem("device-b")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("exactly one certificate");
  }

  @Test
  void should_treat_empty_strings_as_absent_when_building_basic_credentials() {
    var basic = new DeviceCredentials.MqttBasic("", "user", "");

    assertThat(basic.clientId()).isNull();
    assertThat(basic.userName()).isEqualTo("user");
    assertThat(basic.hasPassword()).isFalse();
  }

  @Test
  void should_reject_basic_credentials_when_they_could_never_match() {
    assertThatThrownBy(() -> new DeviceCredentials.MqttBasic(null, "", "secret"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("need a clientId or a userName");
    assertThatThrownBy(() -> new DeviceCredentials.MqttBasic("client", null, "secret"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a userName");
    assertThatThrownBy(() -> new DeviceCredentials.MqttBasic("a\u0000b", null, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("clientId must not contain control characters");
    assertThatThrownBy(() -> new DeviceCredentials.MqttBasic(null, "u".repeat(256), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("userName must have at most 255");
  }

  @Test
  void should_never_print_the_password() {
    assertThat(new DeviceCredentials.MqttBasic("c", "u", "s3cret").toString())
        .doesNotContain("s3cret");
  }

  @Test
  void should_reject_a_blank_access_token() {
    assertThatThrownBy(() -> new DeviceCredentials.AccessToken(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("access token must not be blank");
  }
}
