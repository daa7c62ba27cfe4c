package io.fieldline.server;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.KeyManagerFactory;

/** Certificates made for the TLS tests with Netty's pkitesting: CAs, server pairs, device certs. */
final class TestPki {

  private TestPki() {}

  /** A self-signed CA. */
  static X509Bundle ca(String subject) {
    try {
      return new CertificateBuilder()
          .subject(subject)
          .setIsCertificateAuthority(true)
          .ecp256()
          .buildSelfSigned();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A device (client) certificate issued by a fleet's own CA, which the server does not know: the
   * device's exact certificate is its credential, as with ThingsBoard.
   */
  static X509Bundle device(String subject) {
    try {
      return new CertificateBuilder()
          .subject(subject)
          .setKeyUsage(true, CertificateBuilder.KeyUsage.digitalSignature)
          .addExtendedKeyUsageClientAuth()
          .ecp256()
          .buildIssuedBy(ca("CN=Fleet CA for " + subject));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Writes a server certificate for 127.0.0.1 issued by {@code issuer}, and its key, as PEM. */
  static void writeServerPair(X509Bundle issuer, Path certFile, Path keyFile) throws Exception {
    X509Bundle leaf =
        new CertificateBuilder()
            .subject("CN=localhost")
            .addSanDnsName("localhost")
            .addSanIpAddress("127.0.0.1")
            .setKeyUsage(true, CertificateBuilder.KeyUsage.digitalSignature)
            .addExtendedKeyUsageServerAuth()
            .ecp256()
            .buildIssuedBy(issuer);
    Files.writeString(keyFile, leaf.getPrivateKeyPEM());
    Files.writeString(certFile, leaf.getCertificatePathPEM());
  }

  /** The key managers a TLS client presents {@code bundle} with. */
  static KeyManagerFactory keyManagers(X509Bundle bundle) {
    try {
      return bundle.toKeyManagerFactory();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static Path tempDir() {
    try {
      return Files.createTempDirectory("fieldline-tls-it-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
