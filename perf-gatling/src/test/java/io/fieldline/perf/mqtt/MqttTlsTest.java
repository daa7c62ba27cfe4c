package io.fieldline.perf.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client side of MQTT over TLS against a JDK server engine, both in {@link EmbeddedChannel}s
 * whose bytes the test carries across: trust, host name check, and sessions kept per device.
 */
class MqttTlsTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir static Path dir;

  private static X509Bundle ca;
  private static X509Bundle broker;
  private static SslContext brokerContext;
  private static Path caPem;

  @BeforeAll
  static void makeCertificates() throws Exception {
    ca =
        new CertificateBuilder()
            .subject("CN=bench CA")
            .setIsCertificateAuthority(true)
            .ecp256()
            .buildSelfSigned();
    broker =
        new CertificateBuilder()
            .subject("CN=127.0.0.1")
            .addSanIpAddress("127.0.0.1")
            .addExtendedKeyUsageServerAuth()
            .ecp256()
            .buildIssuedBy(ca);
    brokerContext = server(broker);
    caPem = dir.resolve("ca.pem");
    Files.writeString(caPem, ca.getCertificatePEM());
  }

  private static SslContext server(X509Bundle certificate) throws Exception {
    return SslContextBuilder.forServer(certificate.toKeyManagerFactory())
        .sslProvider(SslProvider.JDK)
        .protocols(MqttTls.PROTOCOLS)
        .build();
  }

  /** One connection of {@code device}: the two channels and the client's handler. */
  private record Connection(EmbeddedChannel client, EmbeddedChannel server, SslHandler handler) {}

  private static Connection connect(MqttTls tls, SslContext server, String host, long device) {
    SslHandler handler = tls.newHandler(ByteBufAllocator.DEFAULT, host, device, TIMEOUT);
    return new Connection(
        new EmbeddedChannel(handler),
        new EmbeddedChannel(server.newHandler(ByteBufAllocator.DEFAULT)),
        handler);
  }

  /** Carries bytes both ways until neither side writes; returns the bytes the server wrote. */
  private static long pump(Connection connection) {
    long serverBytes = 0;
    boolean moved = true;
    while (moved) {
      moved = false;
      for (ByteBuf out; (out = connection.client().readOutbound()) != null; moved = true) {
        connection.server().writeInbound(out);
      }
      for (ByteBuf out; (out = connection.server().readOutbound()) != null; moved = true) {
        serverBytes += out.readableBytes();
        connection.client().writeInbound(out);
      }
    }
    return serverBytes;
  }

  private static long handshake(MqttTls tls, long device) {
    Connection connection = connect(tls, brokerContext, "127.0.0.1", device);
    long bytes = pump(connection);
    assertThat(connection.handler().handshakeFuture().isSuccess()).isTrue();
    connection.client().finishAndReleaseAll();
    connection.server().finishAndReleaseAll();
    return bytes;
  }

  @Test
  void should_complete_the_handshake_when_the_ca_signed_the_broker_certificate_for_the_host() {
    MqttTls tls = MqttTls.trusting(caPem, SslProvider.JDK);
    Connection connection = connect(tls, brokerContext, "127.0.0.1", 1);

    pump(connection);

    assertThat(connection.handler().handshakeFuture().isSuccess()).isTrue();
    assertThat(connection.handler().engine().getSession().getProtocol()).isEqualTo("TLSv1.3");
    assertThat(tls.provider()).isEqualTo(SslProvider.JDK);
  }

  @Test
  void should_fail_the_handshake_when_the_certificate_does_not_name_the_host() {
    MqttTls tls = MqttTls.trusting(caPem, SslProvider.JDK);
    Connection connection = connect(tls, brokerContext, "127.0.0.2", 1);

    catchThrowable(() -> pump(connection));

    assertThat(connection.handler().handshakeFuture().cause())
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessageContaining("127.0.0.2");
  }

  @Test
  void should_fail_the_handshake_when_another_ca_signed_the_broker_certificate() throws Exception {
    X509Bundle otherCa =
        new CertificateBuilder()
            .subject("CN=other CA")
            .setIsCertificateAuthority(true)
            .ecp256()
            .buildSelfSigned();
    X509Bundle stranger =
        new CertificateBuilder()
            .subject("CN=127.0.0.1")
            .addSanIpAddress("127.0.0.1")
            .ecp256()
            .buildIssuedBy(otherCa);
    MqttTls tls = MqttTls.trusting(caPem, SslProvider.JDK);
    Connection connection = connect(tls, server(stranger), "127.0.0.1", 1);

    catchThrowable(() -> pump(connection));

    assertThat(connection.handler().handshakeFuture().cause())
        .isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void should_resume_a_device_own_session_and_never_another_device_session() throws Exception {
    MqttTls tls = MqttTls.trusting(caPem, SslProvider.JDK);
    int certificate = broker.getCertificate().getEncoded().length;

    long first = handshake(tls, 7);
    long again = handshake(tls, 7);
    long otherDevice = handshake(tls, 8);

    // A resumed handshake carries no Certificate message, at least the broker's DER shorter.
    assertThat(again).isLessThan(first - certificate);
    assertThat(otherDevice).isGreaterThan(again + certificate);
  }

  @Test
  void should_give_distinct_session_keys_to_distinct_devices_of_a_run() {
    assertThat(MqttTls.sessionKey(0)).isEqualTo(1);
    assertThat(MqttTls.sessionKey(15_000)).isEqualTo(15_001);
    assertThat(MqttTls.sessionKey(65_534)).isEqualTo(65_535);
    assertThat(MqttTls.sessionKey(65_535)).isEqualTo(1);
  }

  @Test
  void should_refuse_a_missing_ca_file() {
    assertThatThrownBy(() -> MqttTls.trusting(dir.resolve("missing.pem"), SslProvider.JDK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("missing.pem");
  }
}
