package io.fieldline.transport.mqtt.tls;

import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of MQTT over TLS: an {@link SslContext} made from a PEM certificate chain and its
 * PKCS#8 private key, TLS 1.3 and 1.2 only, on OpenSSL (BoringSSL) or the JDK's engine ({@link
 * #provider}), a client certificate asked for if configured.
 *
 * <p>{@link #reloadIfChanged()} re-reads both files when either's modification time changed: a
 * valid new pair serves every connection accepted afterwards (open ones keep their session), an
 * invalid one is logged and the current pair stays. Thread-safe.
 */
public final class TlsContext {

  private static final Logger LOG = LoggerFactory.getLogger(TlsContext.class);

  /** The protocols offered; older ones are refused in the handshake. */
  public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /**
   * The cipher suites offered: TLS 1.3's, and for TLS 1.2 only forward-secret AEAD ones (no static
   * RSA key exchange, no CBC); those the JDK lacks are left out.
   */
  static final List<String> CIPHERS =
      List.of(
          "TLS_AES_128_GCM_SHA256",
          "TLS_AES_256_GCM_SHA384",
          "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

  private record Loaded(
      SslContext context, List<X509Certificate> chain, FileTime certTime, FileTime keyTime) {}

  private static final String PKCS8_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String PKCS8_END = "-----END PRIVATE KEY-----";

  private final Path cert;
  private final Path key;
  private final boolean requestClientCert;
  private final SslProvider provider;
  // Replaced whole by a reload; read by every new connection.
  private volatile Loaded current;

  /**
   * Loads the pair once.
   *
   * @param requestClientCert whether clients are asked for a certificate (optional for them); any
   *     certificate is accepted in the handshake — the CONNECT path authorises it by its exact
   *     fingerprint and checks its validity dates
   * @param provider the TLS engine ({@link #provider})
   * @throws IllegalArgumentException if a file is missing or unreadable, or they do not form a
   *     valid certificate and key
   */
  public TlsContext(Path cert, Path key, boolean requestClientCert, SslProvider provider) {
    this.cert = cert;
    this.key = key;
    this.requestClientCert = requestClientCert;
    this.provider = provider;
    try {
      current = load();
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot use TLS certificate " + cert + " with key " + key + ": " + e.getMessage(), e);
    }
  }

  /**
   * The engine for a configured provider: {@code auto} takes OpenSSL where its native library loads
   * and the JDK's engine elsewhere.
   *
   * @throws IllegalArgumentException for {@code openssl} where OpenSSL cannot load
   */
  public static SslProvider provider(MqttTransportConfig.Provider configured) {
    return switch (configured) {
      case JDK -> SslProvider.JDK;
      case AUTO -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
      case OPENSSL -> {
        if (!OpenSsl.isAvailable()) {
          throw new IllegalArgumentException(
              "fieldline.mqtt.tls.provider = openssl, but OpenSSL cannot be loaded here: "
                  + OpenSsl.unavailabilityCause());
        }
        yield SslProvider.OPENSSL;
      }
    };
  }

  /** The engine in use. */
  public SslProvider provider() {
    return provider;
  }

  /** A handler for one new connection, from the pair in use now. */
  public SslHandler newHandler(ByteBufAllocator allocator) {
    return current.context().newHandler(allocator);
  }

  /** The certificate chain served now, the server's own certificate first. */
  List<X509Certificate> certificateChain() {
    return current.chain();
  }

  /** Re-reads the pair if either file changed since it was loaded; see the class comment. */
  public void reloadIfChanged() {
    Loaded loaded = current;
    try {
      if (Files.getLastModifiedTime(cert).equals(loaded.certTime())
          && Files.getLastModifiedTime(key).equals(loaded.keyTime())) {
        return;
      }
      current = load();
      LOG.info("[mqtt] TLS certificate {} reloaded", cert);
    } catch (IOException | RuntimeException e) {
      LOG.error(
          "[mqtt] TLS certificate {} or key {} changed but cannot be used; keeping the previous"
              + " pair: {}",
          cert,
          key,
          e.toString());
    }
  }

  private static List<X509Certificate> chain(byte[] certPem) throws CertificateException {
    return CertificateFactory.getInstance("X.509")
        .generateCertificates(new ByteArrayInputStream(certPem))
        .stream()
        .map(X509Certificate.class::cast)
        .toList();
  }

  // Signs a random challenge with the key and verifies it with the certificate's public key.
  private static void requireMatchingKey(X509Certificate certificate, byte[] keyPem)
      throws IOException {
    PublicKey publicKey = certificate.getPublicKey();
    String algorithm =
        switch (publicKey.getAlgorithm()) {
          case "EC" -> "SHA256withECDSA";
          case "RSA" -> "SHA256withRSA";
          case "Ed25519" -> "Ed25519";
          default -> throw new IOException("unsupported key algorithm " + publicKey.getAlgorithm());
        };
    try {
      String pem = new String(keyPem, StandardCharsets.US_ASCII);
      int begin = pem.indexOf(PKCS8_BEGIN);
      int end = pem.indexOf(PKCS8_END);
      if (begin < 0 || end < begin) {
        throw new IOException("the key file holds no unencrypted PKCS#8 key (" + PKCS8_BEGIN + ")");
      }
      byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + PKCS8_BEGIN.length(), end));
      PrivateKey privateKey =
          KeyFactory.getInstance(publicKey.getAlgorithm())
              .generatePrivate(new PKCS8EncodedKeySpec(der));
      byte[] challenge = new byte[32];
      new SecureRandom().nextBytes(challenge);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(privateKey);
      signer.update(challenge);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(publicKey);
      verifier.update(challenge);
      if (!verifier.verify(signature)) {
        throw new IOException("the private key does not belong to the certificate");
      }
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IOException("the private key does not belong to the certificate: " + e, e);
    }
  }

  // Both files are read once and everything (the context, the served chain, the key check) is made
  // from those bytes; a pair that changed while it was read is not used this time.
  private Loaded load() throws IOException {
    FileTime certTime = Files.getLastModifiedTime(cert);
    FileTime keyTime = Files.getLastModifiedTime(key);
    byte[] certPem = Files.readAllBytes(cert);
    byte[] keyPem = Files.readAllBytes(key);
    if (!Files.getLastModifiedTime(cert).equals(certTime)
        || !Files.getLastModifiedTime(key).equals(keyTime)) {
      throw new IOException("the files changed while they were read");
    }
    try {
      List<X509Certificate> chain = chain(certPem);
      if (chain.isEmpty()) {
        throw new IOException("no certificate in " + cert);
      }
      // The JDK accepts any key beside any certificate and fails only in the handshakes: check
      // that the pair belongs together before it serves anybody.
      requireMatchingKey(chain.get(0), keyPem);
      SslContextBuilder builder =
          SslContextBuilder.forServer(
                  new ByteArrayInputStream(certPem), new ByteArrayInputStream(keyPem))
              .sslProvider(provider)
              .protocols(PROTOCOLS)
              .ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE);
      if (requestClientCert) {
        // Devices register self-signed certificates: no CA decides here. The handshake proves the
        // client holds the certificate's key; which certificate is authorised is the device
        // registry's answer at CONNECT (an exact fingerprint match), as in ThingsBoard.
        builder.clientAuth(ClientAuth.OPTIONAL).trustManager(InsecureTrustManagerFactory.INSTANCE);
      } else {
        builder.clientAuth(ClientAuth.NONE);
      }
      SslContext context = builder.build();
      return new Loaded(context, chain, certTime, keyTime);
    } catch (SSLException | CertificateException | IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
  }
}
