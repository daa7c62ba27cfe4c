package io.fieldline.common.provision;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.DeviceCredentials;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The answers in ThingsBoard's shape. */
class ProvisionResponseTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode json(ProvisionResponse response) throws IOException {
    return JSON.readTree(response.toJson());
  }

  @Test
  void should_answer_the_token_as_the_value_when_the_credential_is_an_access_token()
      throws IOException {
    JsonNode json =
        json(ProvisionResponse.success(DeviceId.random(), new DeviceCredentials.AccessToken("t1")));

    assertThat(json.get("status").asText()).isEqualTo("SUCCESS");
    assertThat(json.get("credentialsType").asText()).isEqualTo("ACCESS_TOKEN");
    assertThat(json.get("credentialsValue").asText()).isEqualTo("t1");
    assertThat(json.has("errorMsg")).isFalse();
  }

  @Test
  void should_answer_an_object_with_user_name_when_the_credential_is_mqtt_basic()
      throws IOException {
    JsonNode json =
        json(
            ProvisionResponse.success(
                DeviceId.random(), new DeviceCredentials.MqttBasic("c", "u", "p")));

    assertThat(json.get("credentialsType").asText()).isEqualTo("MQTT_BASIC");
    JsonNode value = json.get("credentialsValue");
    assertThat(value.get("clientId").asText()).isEqualTo("c");
    assertThat(value.get("userName").asText()).isEqualTo("u");
    assertThat(value.get("password").asText()).isEqualTo("p");
  }

  @Test
  void should_answer_the_base64_body_when_the_credential_is_a_certificate() throws IOException {
    DeviceCredentials.X509Certificate certificate =
        DeviceCredentials.X509Certificate.parse(ProvisionRequestTest.pem("device-a"));

    JsonNode json = json(ProvisionResponse.success(DeviceId.random(), certificate));

    String value = json.get("credentialsValue").asText();
    assertThat(value).doesNotContain("BEGIN").doesNotContain("\n").startsWith("MII");
    assertThat(DeviceCredentials.X509Certificate.parse(value)).isEqualTo(certificate);
  }

  @Test
  void should_answer_thingsboards_messages_when_refused() throws IOException {
    JsonNode notFound = json(ProvisionResponse.notFound());
    JsonNode failed = json(ProvisionResponse.failed());

    assertThat(notFound.get("status").asText()).isEqualTo("NOT_FOUND");
    assertThat(notFound.get("errorMsg").asText()).isEqualTo("Provision data was not found!");
    assertThat(failed.get("status").asText()).isEqualTo("FAILURE");
    assertThat(failed.get("errorMsg").asText()).isEqualTo("Failed to provision device!");
    assertThat(failed.has("credentialsValue")).isFalse();
  }
}
