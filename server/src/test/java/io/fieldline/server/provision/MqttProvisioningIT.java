package io.fieldline.server.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3SubAckException;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * ThingsBoard's device-side provisioning over MQTT on a real server, with clients we did not write
 * (HiveMQ's MQTT 3.1.1 and 5 clients, Eclipse Paho): a {@code provision} session, its request on
 * {@code /provision/request} and answer on {@code /provision/response}, the credentials it gets
 * then connecting and publishing, refusals creating nothing, and the session's limits.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MqttProvisioningIT extends ProvisionTestBase {

  private static final String TELEMETRY = "v1/devices/me/telemetry";

  @Override
  protected Map<String, Object> overrides() {
    // The tests send more requests at once than the default burst; the lock-out test counts on
    // a small failure budget; a provisioning session is closed connect-timeout after its answer.
    return Map.of(
        "fieldline.provision.per-address-burst", 1000,
        "fieldline.provision.max-failures-per-address", 6,
        "fieldline.mqtt.connect-timeout", "2 seconds");
  }

  /** Publishes one telemetry message with QoS 1 (the PUBACK comes once it is stored). */
  private static void publish(Mqtt3BlockingClient client, String payload) {
    client
        .publishWith()
        .topic(TELEMETRY)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  @Test
  void should_create_a_device_with_a_generated_token_that_then_connects_and_publishes() {
    String profile =
        createProfile("generated-token", "ALLOW_CREATE_NEW_DEVICES", "gen-key", "gen-secret");

    JsonNode answer = provision(request("sensor-generated", "gen-key", "gen-secret", ""));

    assertThat(answer.path("status").asText()).isEqualTo("SUCCESS");
    assertThat(answer.path("credentialsType").asText()).isEqualTo("ACCESS_TOKEN");
    String token = answer.path("credentialsValue").asText();
    assertThat(token).hasSize(20).matches("[A-Za-z0-9]+");
    JsonNode device = deviceNamed("sensor-generated");
    assertThat(device).isNotNull();
    assertThat(device.path("deviceProfileId").path("id").asText()).isEqualTo(profile);
    assertThat(device.path("type").asText()).isEqualTo("generated-token");

    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier("generated-device")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username(token)
            .applySimpleAuth()
            .buildBlocking();
    client.connect();
    publish(client, "{\"temperature\":21.5}");
    client.disconnect();
    assertThat(rows(device.path("id").path("id").asText())).isEqualTo(1);
    assertThat(metric("fieldline_provision_creations_total")).isGreaterThanOrEqualTo(1);
  }

  @Test
  void should_create_a_device_with_its_own_token_when_it_connects_with_client_id_provision()
      throws Exception {
    createProfile("own-token", "ALLOW_CREATE_NEW_DEVICES", "own-key", "own-secret");
    MqttClient paho =
        new MqttClient("tcp://127.0.0.1:" + mqttPort(), "provision", new MemoryPersistence());
    CompletableFuture<String> answer = new CompletableFuture<>();
    CompletableFuture<Throwable> lost = new CompletableFuture<>();
    paho.setCallback(
        new MqttCallback() {
          @Override
          public void connectionLost(Throwable cause) {
            lost.complete(cause);
          }

          @Override
          public void messageArrived(String topic, MqttMessage message) {
            answer.complete(new String(message.getPayload(), StandardCharsets.UTF_8));
          }

          @Override
          public void deliveryComplete(IMqttDeliveryToken token) {}
        });
    MqttConnectOptions options = new MqttConnectOptions();
    options.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
    options.setAutomaticReconnect(false);
    paho.connect(options);
    paho.subscribe(RESPONSE, 1);
    paho.publish(
        REQUEST,
        request(
                "sensor-own-token",
                "own-key",
                "own-secret",
                ",\"credentialsType\":\"ACCESS_TOKEN\",\"token\":\"own-token-1\"")
            .getBytes(StandardCharsets.UTF_8),
        1,
        false);

    JsonNode json = json(answer.get(10, TimeUnit.SECONDS));
    assertThat(json.path("status").asText()).isEqualTo("SUCCESS");
    assertThat(json.path("credentialsValue").asText()).isEqualTo("own-token-1");
    // Paho stays connected: the server closes the session a while after it answered
    // (connect-timeout, 2 s here), as ThingsBoard does (60 s).
    lost.get(10, TimeUnit.SECONDS);
    paho.close();

    Mqtt3BlockingClient device =
        Mqtt3Client.builder()
            .identifier("own-token-device")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username("own-token-1")
            .applySimpleAuth()
            .buildBlocking();
    device.connect();
    publish(device, "{\"v\":1}");
    device.disconnect();
    assertThat(rows(deviceNamed("sensor-own-token").path("id").path("id").asText())).isEqualTo(1);
  }

  @Test
  void should_create_mqtt_basic_credentials_that_then_connect_when_asked_over_mqtt_5() {
    createProfile("basic", "ALLOW_CREATE_NEW_DEVICES", "basic-key", "basic-secret");
    Mqtt5BlockingClient client =
        Mqtt5Client.builder()
            .identifier("provision-v5")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username("provision")
            .applySimpleAuth()
            .buildBlocking();
    client.connect();
    JsonNode answer;
    try (Mqtt5BlockingClient.Mqtt5Publishes answers =
        client.publishes(MqttGlobalPublishFilter.ALL)) {
      client.subscribeWith().topicFilter(RESPONSE).qos(MqttQos.AT_LEAST_ONCE).send();
      client
          .publishWith()
          .topic(REQUEST)
          .qos(MqttQos.AT_LEAST_ONCE)
          .payload(
              request(
                      "sensor-basic",
                      "basic-key",
                      "basic-secret",
                      ",\"credentialsType\":\"MQTT_BASIC\",\"clientId\":\"basic-client\","
                          + "\"username\":\"basic-user\",\"password\":\"basic-pass\"")
                  .getBytes(StandardCharsets.UTF_8))
          .send();
      Optional<Mqtt5Publish> received = answers.receive(10, TimeUnit.SECONDS);
      assertThat(received).isPresent();
      answer = json(new String(received.get().getPayloadAsBytes(), StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    client.disconnect();

    assertThat(answer.path("status").asText()).isEqualTo("SUCCESS");
    assertThat(answer.path("credentialsType").asText()).isEqualTo("MQTT_BASIC");
    JsonNode value = answer.path("credentialsValue");
    assertThat(value.path("clientId").asText()).isEqualTo("basic-client");
    assertThat(value.path("userName").asText()).isEqualTo("basic-user");
    assertThat(value.path("password").asText()).isEqualTo("basic-pass");

    Mqtt3BlockingClient device =
        Mqtt3Client.builder()
            .identifier("basic-client")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username("basic-user")
            .password("basic-pass".getBytes(StandardCharsets.UTF_8))
            .applySimpleAuth()
            .buildBlocking();
    device.connect();
    publish(device, "{\"humidity\":40}");
    device.disconnect();
    assertThat(rows(deviceNamed("sensor-basic").path("id").path("id").asText())).isEqualTo(1);
  }

  @Test
  void should_store_the_certificate_when_a_device_provisions_one() throws Exception {
    createProfile("certified", "ALLOW_CREATE_NEW_DEVICES", "cert-key", "cert-secret");
    X509Bundle certificate =
        new CertificateBuilder()
            .subject("CN=sensor-certified")
            .setIsCertificateAuthority(true)
            .ecp256()
            .buildSelfSigned();
    String pem = certificate.getCertificatePEM().replace("\n", "\\n").replace("\r", "");

    JsonNode answer =
        provision(
            request(
                "sensor-certified",
                "cert-key",
                "cert-secret",
                ",\"credentialsType\":\"X509_CERTIFICATE\",\"hash\":\"" + pem + "\""));

    assertThat(answer.path("status").asText()).isEqualTo("SUCCESS");
    assertThat(answer.path("credentialsType").asText()).isEqualTo("X509_CERTIFICATE");
    String body = answer.path("credentialsValue").asText();
    assertThat(body).doesNotContain("BEGIN").doesNotContain("\n");
    String deviceId = deviceNamed("sensor-certified").path("id").path("id").asText();
    JsonNode stored = ok(get("/api/device/" + deviceId + "/credentials"));
    assertThat(stored.path("credentialsType").asText()).isEqualTo("X509_CERTIFICATE");
    assertThat(stored.path("credentialsValue").asText().replaceAll("\\s|-----[A-Z ]+-----", ""))
        .isEqualTo(body);
  }

  @Test
  void should_answer_not_found_and_create_nothing_when_the_key_or_secret_is_wrong() {
    createProfile("guarded", "ALLOW_CREATE_NEW_DEVICES", "guarded-key", "guarded-secret");
    long before = deviceCount();
    double notFound = metric("fieldline_provision_refused_total{reason=\"not_found\"");

    JsonNode wrongSecret = provision(request("intruder", "guarded-key", "guess", ""));
    JsonNode unknownKey = provision(request("intruder", "no-such-key", "guarded-secret", ""));

    for (JsonNode answer : new JsonNode[] {wrongSecret, unknownKey}) {
      assertThat(answer.path("status").asText()).isEqualTo("NOT_FOUND");
      assertThat(answer.path("errorMsg").asText()).isEqualTo("Provision data was not found!");
      assertThat(answer.has("credentialsValue")).isFalse();
    }
    assertThat(deviceCount()).isEqualTo(before);
    assertThat(deviceNamed("intruder")).isNull();
    assertThat(metric("fieldline_provision_refused_total{reason=\"not_found\""))
        .isEqualTo(notFound + 2);
  }

  @Test
  void should_answer_failure_when_a_new_device_takes_a_name_that_exists() {
    createProfile("taken-names", "ALLOW_CREATE_NEW_DEVICES", "taken-key", "taken-secret");
    ok(post("/api/device", "{\"name\":\"already-here\"}"));
    long before = deviceCount();

    JsonNode answer = provision(request("already-here", "taken-key", "taken-secret", ""));

    assertThat(answer.path("status").asText()).isEqualTo("FAILURE");
    assertThat(answer.path("errorMsg").asText()).isEqualTo("Failed to provision device!");
    assertThat(deviceCount()).isEqualTo(before);
  }

  @Test
  void should_answer_the_stored_token_only_for_devices_pre_provisioned_with_the_profile() {
    String profile =
        createProfile("factory", "CHECK_PRE_PROVISIONED_DEVICES", "factory-key", "factory-secret");
    String other = createProfile("elsewhere", "DISABLED", null, null);
    ok(
        post(
            "/api/device?accessToken=factory-token-1",
            "{\"name\":\"factory-1\",\"deviceProfileId\":{\"entityType\":\"DEVICE_PROFILE\","
                + "\"id\":\""
                + profile
                + "\"}}"));
    ok(
        post(
            "/api/device",
            "{\"name\":\"wrong-profile\",\"deviceProfileId\":{\"entityType\":\"DEVICE_PROFILE\","
                + "\"id\":\""
                + other
                + "\"}}"));
    long before = deviceCount();

    JsonNode known = provision(request("factory-1", "factory-key", "factory-secret", ""));
    JsonNode unknown = provision(request("factory-2", "factory-key", "factory-secret", ""));
    JsonNode elsewhere = provision(request("wrong-profile", "factory-key", "factory-secret", ""));

    assertThat(known.path("status").asText()).isEqualTo("SUCCESS");
    assertThat(known.path("credentialsType").asText()).isEqualTo("ACCESS_TOKEN");
    assertThat(known.path("credentialsValue").asText()).isEqualTo("factory-token-1");
    assertThat(unknown.path("status").asText()).isEqualTo("FAILURE");
    assertThat(elsewhere.path("status").asText()).isEqualTo("FAILURE");
    assertThat(deviceCount()).isEqualTo(before);
    assertThat(deviceNamed("factory-2")).isNull();
  }

  @Test
  void should_close_a_provisioning_session_that_publishes_telemetry_or_subscribes_elsewhere() {
    long devices = deviceCount();
    double topicRejections = metric("fieldline_mqtt_rejected_total{reason=\"topic\"");
    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier("provision")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .buildBlocking();
    client.connect();
    assertThatThrownBy(
            () -> client.subscribeWith().topicFilter(TELEMETRY).qos(MqttQos.AT_LEAST_ONCE).send())
        .isInstanceOf(Mqtt3SubAckException.class);

    assertThatThrownBy(() -> publish(client, "{\"stolen\":1}"))
        .isInstanceOf(RuntimeException.class);

    await().atMost(Duration.ofSeconds(10)).until(() -> !client.getState().isConnected());
    assertThat(metric("fieldline_mqtt_rejected_total{reason=\"topic\""))
        .isEqualTo(topicRejections + 1);
    assertThat(deviceCount()).isEqualTo(devices);
  }

  @Test
  @Order(Integer.MAX_VALUE)
  void should_refuse_even_the_right_secret_when_an_address_guessed_too_often() {
    createProfile("locked", "ALLOW_CREATE_NEW_DEVICES", "locked-key", "locked-secret");
    long before = deviceCount();

    String last = "NOT_FOUND";
    for (int guess = 0; guess < 7 && last.equals("NOT_FOUND"); guess++) {
      last =
          provision(request("guesser", "locked-key", "guess-" + guess, "")).path("status").asText();
    }
    JsonNode right = provision(request("guesser", "locked-key", "locked-secret", ""));

    assertThat(last).isEqualTo("FAILURE");
    assertThat(right.path("status").asText()).isEqualTo("FAILURE");
    assertThat(right.path("errorMsg").asText()).contains("too many");
    assertThat(deviceCount()).isEqualTo(before);
    assertThat(metric("fieldline_provision_refused_total{reason=\"locked_out\""))
        .isGreaterThanOrEqualTo(2);
  }
}
