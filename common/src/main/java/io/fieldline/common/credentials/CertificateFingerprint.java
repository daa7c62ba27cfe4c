package io.fieldline.common.credentials;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The key an {@link CredentialsType#X509_CERTIFICATE} credential is found by: the SHA-256 digest of
 * the certificate's DER encoding, lower-case hex (what {@code openssl x509 -fingerprint -sha256}
 * prints, without the colons). The REST API computes it from the PEM it is given, the TLS listener
 * from the certificate the client presented; both must agree, so both call this.
 */
public final class CertificateFingerprint {

  private CertificateFingerprint() {}

  /** The fingerprint of a certificate's DER encoding. */
  public static String sha256(byte[] derEncoded) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(derEncoded));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
