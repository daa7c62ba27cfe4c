package io.fieldline.transport.mqtt.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslProvider;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsContextTest {

  @TempDir Path dir;

  private static X509Bundle selfSigned(String subject) throws Exception {
    return new CertificateBuilder()
        .subject(subject)
        .setIsCertificateAuthority(true)
        .ecp256()
        .buildSelfSigned();
  }

  private static void write(X509Bundle bundle, Path cert, Path key, Instant modified)
      throws Exception {
    Files.writeString(cert, bundle.getCertificatePathPEM());
    Files.writeString(key, bundle.getPrivateKeyPEM());
    Files.setLastModifiedTime(cert, FileTime.from(modified));
    Files.setLastModifiedTime(key, FileTime.from(modified));
  }

  private static String servedSubject(TlsContext tls) {
    return tls.certificateChain().get(0).getSubjectX500Principal().getName();
  }

  @Test
  void should_serve_the_configured_pair_with_tls_13_and_12_only() throws Exception {
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    write(selfSigned("CN=one"), cert, key, Instant.parse("2026-01-01T00:00:00Z"));

    TlsContext tls = new TlsContext(cert, key, true, SslProvider.JDK);

    assertThat(servedSubject(tls)).isEqualTo("CN=one");
    assertThat(tls.newHandler(ByteBufAllocator.DEFAULT).engine().getEnabledProtocols())
        .containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
  }

  @Test
  void should_refuse_to_start_when_the_key_does_not_belong_to_the_certificate() throws Exception {
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    Files.writeString(cert, selfSigned("CN=one").getCertificatePathPEM());
    Files.writeString(key, selfSigned("CN=two").getPrivateKeyPEM());

    assertThatThrownBy(() -> new TlsContext(cert, key, true, SslProvider.JDK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot use TLS certificate");
    assertThatThrownBy(() -> new TlsContext(dir.resolve("missing.pem"), key, true, SslProvider.JDK))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void should_take_a_changed_valid_pair_and_keep_the_old_one_when_the_new_is_unusable()
      throws Exception {
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    write(selfSigned("CN=one"), cert, key, Instant.parse("2026-01-01T00:00:00Z"));
    TlsContext tls = new TlsContext(cert, key, true, SslProvider.JDK);

    tls.reloadIfChanged(); // nothing changed
    assertThat(servedSubject(tls)).isEqualTo("CN=one");

    // Half a renewal: a new certificate with the old key is not usable.
    Files.writeString(cert, selfSigned("CN=two").getCertificatePathPEM());
    Files.setLastModifiedTime(cert, FileTime.from(Instant.parse("2026-02-01T00:00:00Z")));
    tls.reloadIfChanged();
    assertThat(servedSubject(tls)).isEqualTo("CN=one");

    write(selfSigned("CN=three"), cert, key, Instant.parse("2026-03-01T00:00:00Z"));
    tls.reloadIfChanged();
    assertThat(servedSubject(tls)).isEqualTo("CN=three");
  }

  @Test
  void should_use_openssl_where_it_loads_and_the_jdk_when_told() {
    // netty-tcnative ships BoringSSL for Linux, macOS and Windows on x86_64 and aarch64.
    assertThat(TlsContext.provider(MqttTransportConfig.Provider.AUTO))
        .isEqualTo(SslProvider.OPENSSL);
    assertThat(TlsContext.provider(MqttTransportConfig.Provider.OPENSSL))
        .isEqualTo(SslProvider.OPENSSL);
    assertThat(TlsContext.provider(MqttTransportConfig.Provider.JDK)).isEqualTo(SslProvider.JDK);
  }
}
