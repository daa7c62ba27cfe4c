package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3ConnAckException;
import com.hivemq.client.mqtt.mqtt3.message.connect.connack.Mqtt3ConnAckReturnCode;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import io.fieldline.common.device.Device;
import io.netty.pkitesting.X509Bundle;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's three credential types on the MQTT side, each set over REST the way ThingsBoard's
 * clients do it ({@code GET /api/device/{id}/credentials}, change, {@code POST
 * /api/device/credentials}), with HiveMQ's clients: X.509 client certificates on the TLS listener,
 * MQTT_BASIC with right and wrong passwords, and a credential replaced while its device is
 * connected.
 */
class MqttCredentialsIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TELEMETRY = "v1/devices/me/telemetry";

  private final Path dir = TestPki.tempDir();
  private final X509Bundle ca = TestPki.ca("CN=Fieldline credentials test CA");
  private final Path cert = dir.resolve("server-chain.pem");
  private final Path key = dir.resolve("server-key.pem");

  MqttCredentialsIT() throws Exception {
    TestPki.writeServerPair(ca, cert, key);
  }

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.mqtt.tls.port", 0,
        "fieldline.mqtt.tls.cert", cert.toString(),
        "fieldline.mqtt.tls.key", key.toString());
  }

  @Test
  void should_authenticate_a_registered_client_certificate_and_refuse_an_unknown_one() {
    Device device = createDevice("x509-device");
    X509Bundle deviceCert = TestPki.device("CN=x509-device");
    setCredentials(device, "X509_CERTIFICATE", null, deviceCert.getCertificatePEM());

    // No user name at all: the certificate is the credential.
    Mqtt3BlockingClient client = tlsClient("x509-device", deviceCert);
    client.connect();
    publish(client, "{\"cert\":1}");
    assertThat(rows(device)).isEqualTo(1);
    client.disconnect();

    X509Bundle stranger = TestPki.device("CN=x509-stranger");
    assertThatThrownBy(() -> tlsClient("x509-stranger", stranger).connect())
        .isInstanceOfSatisfying(
            Mqtt3ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReturnCode())
                    .isEqualTo(Mqtt3ConnAckReturnCode.NOT_AUTHORIZED));
    // Over MQTT 5 the same certificate gets ThingsBoard's v5 code.
    Mqtt5BlockingClient v5 =
        Mqtt5Client.builder()
            .identifier("x509-stranger-5")
            .serverHost("127.0.0.1")
            .serverPort(server.mqttTlsPort())
            .sslConfig()
            .trustManagerFactory(ca.toTrustManagerFactory())
            .keyManagerFactory(TestPki.keyManagers(stranger))
            .handshakeTimeout(10, TimeUnit.SECONDS)
            .applySslConfig()
            .buildBlocking();
    assertThatThrownBy(v5::connect)
        .isInstanceOfSatisfying(
            Mqtt5ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5ConnAckReasonCode.NOT_AUTHORIZED));
  }

  @Test
  void should_authenticate_mqtt_basic_with_the_right_password_only() {
    Device device = createDevice("basic-device");
    setCredentials(
        device,
        "MQTT_BASIC",
        "{\"clientId\":\"basic-client\",\"userName\":\"basic-user\",\"password\":\"s3cret\"}",
        null);

    Mqtt5BlockingClient right = basicClient("basic-client");
    right
        .connectWith()
        .simpleAuth()
        .username("basic-user")
        .password("s3cret".getBytes(StandardCharsets.UTF_8))
        .applySimpleAuth()
        .send();
    right
        .publishWith()
        .topic(TELEMETRY)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload("{\"basic\":1}".getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(rows(device)).isEqualTo(1);
    right.disconnect();

    assertThatThrownBy(
            () ->
                basicClient("basic-client")
                    .connectWith()
                    .simpleAuth()
                    .username("basic-user")
                    .password("wrong".getBytes(StandardCharsets.UTF_8))
                    .applySimpleAuth()
                    .send())
        .isInstanceOfSatisfying(
            Mqtt5ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5ConnAckReasonCode.NOT_AUTHORIZED));
    // MQTT 3.1.1: 0x05.
    assertThatThrownBy(
            () ->
                Mqtt3Client.builder()
                    .identifier("basic-client")
                    .serverHost("127.0.0.1")
                    .serverPort(mqttPort())
                    .buildBlocking()
                    .connectWith()
                    .simpleAuth()
                    .username("basic-user")
                    .password("wrong".getBytes(StandardCharsets.UTF_8))
                    .applySimpleAuth()
                    .send())
        .isInstanceOfSatisfying(
            Mqtt3ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReturnCode())
                    .isEqualTo(Mqtt3ConnAckReturnCode.NOT_AUTHORIZED));
  }

  @Test
  void should_close_a_connected_session_when_its_credential_is_replaced() {
    Device device = createDevice("rotated-device", "rotated-token");
    AtomicReference<Throwable> disconnected = new AtomicReference<>();
    Mqtt5AsyncClient client =
        Mqtt5Client.builder()
            .identifier("rotated-device")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .addDisconnectedListener(context -> disconnected.set(context.getCause()))
            .buildAsync();
    client.connectWith().simpleAuth().username("rotated-token").applySimpleAuth().send().join();

    setCredentials(device, "ACCESS_TOKEN", null, null, "rotated-token-2");

    // Told why: not authorized any more (not "taken over").
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(disconnected.get())
                    .isInstanceOfSatisfying(
                        Mqtt5DisconnectException.class,
                        e ->
                            assertThat(e.getMqttMessage().getReasonCode())
                                .isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED)));
    assertThatThrownBy(
            () ->
                basicClient("rotated-device")
                    .connectWith()
                    .simpleAuth()
                    .username("rotated-token")
                    .applySimpleAuth()
                    .send())
        .isInstanceOf(Mqtt5ConnAckException.class);
    Mqtt5BlockingClient renewed = basicClient("rotated-device");
    renewed.connectWith().simpleAuth().username("rotated-token-2").applySimpleAuth().send();
    renewed.disconnect();
  }

  private void setCredentials(
      Device device, String type, String basicValue, String certificatePem) {
    setCredentials(device, type, basicValue, certificatePem, null);
  }

  /** GET the device's credentials, change them, POST them back: ThingsBoard's way. */
  private void setCredentials(
      Device device, String type, String basicValue, String certificatePem, String token) {
    String jwt = login();
    HttpResponse<String> current = get("/api/device/" + device.id() + "/credentials", jwt);
    assertThat(current.statusCode()).as(current.body()).isEqualTo(200);
    ObjectNode credentials;
    try {
      credentials = (ObjectNode) JSON.readTree(current.body());
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    credentials.put("credentialsType", type);
    switch (type) {
      case "ACCESS_TOKEN" -> {
        credentials.put("credentialsId", token);
        credentials.putNull("credentialsValue");
      }
      case "MQTT_BASIC" -> {
        credentials.putNull("credentialsId");
        credentials.put("credentialsValue", basicValue);
      }
      default -> {
        credentials.putNull("credentialsId");
        credentials.put("credentialsValue", certificatePem);
      }
    }
    HttpResponse<String> saved = post("/api/device/credentials", jwt, credentials.toString());
    assertThat(saved.statusCode()).as(saved.body()).isEqualTo(200);
  }

  private String login() {
    try {
      String body = "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}";
      JsonNode answer = JSON.readTree(post("/api/auth/login", null, body).body());
      return answer.get("token").asText();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private Mqtt3BlockingClient tlsClient(String id, X509Bundle clientCertificate) {
    return Mqtt3Client.builder()
        .identifier(id)
        .serverHost("127.0.0.1")
        .serverPort(server.mqttTlsPort())
        .sslConfig()
        .trustManagerFactory(ca.toTrustManagerFactory())
        .keyManagerFactory(TestPki.keyManagers(clientCertificate))
        .handshakeTimeout(10, TimeUnit.SECONDS)
        .applySslConfig()
        .buildBlocking();
  }

  private Mqtt5BlockingClient basicClient(String clientId) {
    return Mqtt5Client.builder()
        .identifier(clientId)
        .serverHost("127.0.0.1")
        .serverPort(mqttPort())
        .buildBlocking();
  }

  private static void publish(Mqtt3BlockingClient client, String payload) {
    client
        .publishWith()
        .topic(TELEMETRY)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }
}
