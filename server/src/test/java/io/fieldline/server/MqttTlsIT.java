package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.exceptions.ConnectionFailedException;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import io.fieldline.common.device.Device;
import io.netty.pkitesting.X509Bundle;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * MQTT over TLS with a real client (HiveMQ's): a CA and a server certificate made for the test
 * (Netty's pkitesting), written as PEM files the server is configured with.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MqttTlsIT extends ServerTestBase {

  private final Path dir = TestPki.tempDir();
  private final X509Bundle ca = TestPki.ca("CN=Fieldline test CA");
  private final Path cert = dir.resolve("server-chain.pem");
  private final Path key = dir.resolve("server-key.pem");

  MqttTlsIT() throws Exception {
    TestPki.writeServerPair(ca, cert, key);
  }

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.mqtt.tls.port",
        0,
        "fieldline.mqtt.tls.cert",
        cert.toString(),
        "fieldline.mqtt.tls.key",
        key.toString(),
        "fieldline.mqtt.tls.reload-interval",
        "200 ms");
  }

  @Test
  void should_store_a_qos1_message_before_the_puback_when_the_client_trusts_the_ca() {
    Device device = createDevice("tls-device", "tls-token");
    Mqtt3BlockingClient client = tlsClient("tls-device", ca);
    client.connectWith().simpleAuth().username("tls-token").applySimpleAuth().send();

    // Returns only when the PUBACK arrived.
    client
        .publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload("{\"temperature\":21.5}".getBytes(StandardCharsets.UTF_8))
        .send();

    assertThat(rows(device)).isEqualTo(1);
    assertThat(server.mqttTlsPort()).isPositive().isNotEqualTo(server.mqttPort());
    client.disconnect();
  }

  @Test
  void should_fail_the_handshake_when_the_client_trusts_another_ca() {
    createDevice("tls-stranger", "tls-stranger-token");
    Mqtt3BlockingClient client = tlsClient("tls-stranger", TestPki.ca("CN=Someone else's CA"));
    double before = metric("fieldline_mqtt_rejected_total{reason=\"tls\"");

    assertThatThrownBy(
            () ->
                client
                    .connectWith()
                    .simpleAuth()
                    .username("tls-stranger-token")
                    .applySimpleAuth()
                    .send())
        .hasCauseInstanceOf(SSLHandshakeException.class);
    // The client tells the server why (a certificate_unknown alert): counted there.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(metric("fieldline_mqtt_rejected_total{reason=\"tls\""))
                    .isGreaterThan(before));
  }

  @Test
  void should_drop_plain_mqtt_on_the_tls_port_and_keep_serving_others() throws Exception {
    Device bystander = createDevice("tls-bystander", "tls-bystander-token");
    Mqtt3BlockingClient plain = client("tls-bystander");
    plain.connectWith().simpleAuth().username("tls-bystander-token").applySimpleAuth().send();

    double before = metric("fieldline_mqtt_rejected_total{reason=\"tls\"");
    try (Socket socket = new Socket("127.0.0.1", server.mqttTlsPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      // A clear-text MQTT 3.1.1 CONNECT (client id "x"), not a TLS record.
      out.write(
          new byte[] {
            0x10, 0x0d, 0x00, 0x04, 'M', 'Q', 'T', 'T', 0x04, 0x02, 0x00, 0x3c, 0x00, 0x01, 'x'
          });
      out.flush();
      InputStream in = socket.getInputStream();
      int first = readUntilClosed(in);
      // Either closed at once, or a TLS alert (0x15) before the close: never an MQTT CONNACK.
      assertThat(first).isIn(-1, 0x15);
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(metric("fieldline_mqtt_rejected_total{reason=\"tls\""))
                    .isGreaterThan(before));
    plain
        .publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload("{\"ok\":1}".getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(rows(bystander)).isEqualTo(1);
    plain.disconnect();
  }

  @Test
  @Order(Integer.MAX_VALUE) // last: it replaces the certificate the other tests trust
  void should_serve_a_replaced_certificate_to_new_connections_without_a_restart() throws Exception {
    createDevice("tls-renewed", "tls-renewed-token");
    X509Bundle newCa = TestPki.ca("CN=Fieldline renewed CA");
    Path newCert = dir.resolve("renewed-chain.pem");
    Path newKey = dir.resolve("renewed-key.pem");
    TestPki.writeServerPair(newCa, newCert, newKey);

    // What an operator's renewal does: both files replaced in place (key first).
    Files.move(newKey, key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    Files.move(newCert, cert, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

    // Until the server's next reload (every 200 ms) the handshake still meets the old
    // certificate and fails; once it has reloaded, a connection must succeed.
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptionsInstanceOf(ConnectionFailedException.class)
        .untilAsserted(
            () -> {
              Mqtt3BlockingClient client = tlsClient("tls-renewed", newCa);
              client
                  .connectWith()
                  .simpleAuth()
                  .username("tls-renewed-token")
                  .applySimpleAuth()
                  .send();
              client.disconnect();
            });
  }

  private Mqtt3BlockingClient tlsClient(String id, X509Bundle trusted) {
    return Mqtt3Client.builder()
        .identifier(id)
        .serverHost("127.0.0.1")
        .serverPort(server.mqttTlsPort())
        .sslConfig()
        .trustManagerFactory(trusted.toTrustManagerFactory())
        .handshakeTimeout(10, TimeUnit.SECONDS)
        .applySslConfig()
        .buildBlocking();
  }
}
