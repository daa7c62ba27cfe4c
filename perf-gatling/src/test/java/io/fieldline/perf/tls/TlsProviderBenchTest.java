package io.fieldline.perf.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslProvider;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsProviderBenchTest {

  @TempDir static Path dir;

  @BeforeAll
  static void makeCertificates() throws Exception {
    X509Bundle ca =
        new CertificateBuilder()
            .subject("CN=bench CA")
            .setIsCertificateAuthority(true)
            .ecp256()
            .buildSelfSigned();
    X509Bundle server =
        new CertificateBuilder()
            .subject("CN=127.0.0.1")
            .addSanIpAddress("127.0.0.1")
            .ecp256()
            .buildIssuedBy(ca);
    Files.writeString(dir.resolve("ca.pem"), ca.getCertificatePEM());
    Files.writeString(dir.resolve("server.pem"), server.getCertificatePEM());
    Files.writeString(dir.resolve("server.key"), server.getPrivateKeyPEM());
  }

  @Test
  void should_send_a_qos1_telemetry_publish_the_mqtt_decoder_reads() {
    EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder());

    decoder.writeInbound(Unpooled.wrappedBuffer(TlsProviderBench.PUBLISH));
    MqttPublishMessage publish = decoder.readInbound();

    assertThat(publish.decoderResult().isSuccess()).isTrue();
    assertThat(publish.fixedHeader().qosLevel()).isEqualTo(MqttQoS.AT_LEAST_ONCE);
    assertThat(publish.variableHeader().topicName()).isEqualTo("v1/devices/me/telemetry");
    assertThat(publish.variableHeader().packetId()).isEqualTo(1);
    assertThat(publish.payload().toString(StandardCharsets.UTF_8)).startsWith("{\"ts\":");
    assertThat(publish.payload().readableBytes()).isBetween(90, 110);
    publish.release();

    decoder.writeInbound(Unpooled.wrappedBuffer(TlsProviderBench.PUBACK));
    MqttMessage puback = decoder.readInbound();
    assertThat(puback.fixedHeader().messageType()).isEqualTo(MqttMessageType.PUBACK);
  }

  @Test
  void should_complete_handshakes_and_read_every_record_when_the_server_runs_either_provider()
      throws Exception {
    SslContext client = TlsProviderBench.client(dir.resolve("ca.pem"), SslProvider.JDK, "TLSv1.3");
    for (SslProvider provider : new SslProvider[] {SslProvider.JDK, SslProvider.OPENSSL}) {
      SslContext server =
          TlsProviderBench.server(dir.resolve("server.pem"), dir.resolve("server.key"), provider);

      TlsProviderBench.Round round = TlsProviderBench.measure(server, client, 0.4);

      assertThat(round.session()).as("%s", provider).startsWith("TLSv1.3 TLS_AES_");
      assertThat(round.handshakes()).as("%s", provider).isPositive();
      assertThat(round.handshakeMicros()).as("%s", provider).isPositive();
      assertThat(round.records()).as("%s", provider).isPositive();
      assertThat(round.readMicros()).as("%s", provider).isPositive();
      assertThat(round.writeMicros()).as("%s", provider).isPositive();
    }
  }

  @Test
  void should_report_the_median_round_and_the_ratio_of_the_providers() {
    TlsProviderBench.Round jdk =
        new TlsProviderBench.Round(10, 1_000, 900, 1_500, 1_000, 6, 4, "s");
    TlsProviderBench.Round slowJdk =
        new TlsProviderBench.Round(10, 3_000, 900, 1_500, 1_000, 8, 4, "s");
    TlsProviderBench.Round openssl =
        new TlsProviderBench.Round(40, 250, 900, 750, 1_000, 2, 2, "s");

    String markdown =
        TlsProviderBench.render(
            Map.of(
                SslProvider.JDK,
                List.of(jdk, slowJdk, jdk),
                SslProvider.OPENSSL,
                List.of(openssl, openssl, openssl)),
            "EC P-256",
            "TLSv1.3",
            SslProvider.JDK,
            10,
            20,
            "2 cores",
            "bench/tls-providers.sh");

    assertThat(markdown)
        .contains("EC P-256 certificate, TLSv1.3")
        .contains(
            "| full handshake, µs (engine created, ClientHello → session ticket) |"
                + " 1,000 (1,000–3,000) | 250 (250–250) | 4.00 |")
        .contains("| full handshakes per second per core | 1,000 | 4,000 | |")
        .contains("| TLS per QoS 1 message (read + write), µs | 10.00 (10.00–12.00) | 4.00");
  }
}
