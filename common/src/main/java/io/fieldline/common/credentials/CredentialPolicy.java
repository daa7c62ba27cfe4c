package io.fieldline.common.credentials;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.interfaces.DSAKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * What a credential must satisfy to be given to a device, beyond being well-formed ({@link
 * DeviceCredentials} checks that when it is built, also for credentials read back from storage):
 * that the device can connect with it, and that a certificate is one worth trusting today.
 *
 * <ul>
 *   <li>The name {@value #PROVISION_NAME} is reserved: a CONNECT with that user name or client id
 *       starts ThingsBoard's device self-provisioning, so an access token, an MQTT_BASIC user name
 *       or client id {@value #PROVISION_NAME} could never connect as the device.
 *   <li>An X509_CERTIFICATE must be valid now (not expired, not yet valid is refused too), with an
 *       RSA key of at least {@value #MIN_RSA_BITS} bits or an EC key of at least {@value
 *       #MIN_EC_BITS} bits (EdDSA keys are accepted; DSA keys are not), and not signed with MD5,
 *       MD2 or SHA-1.
 * </ul>
 *
 * Checked where a credential is assigned (REST create and credentials update), not where one is
 * read. Stateless.
 */
public final class CredentialPolicy {

  /** The user name and client id that open a provisioning session instead of a device's. */
  public static final String PROVISION_NAME = "provision";

  /** Smallest RSA modulus accepted in a device certificate, in bits. */
  public static final int MIN_RSA_BITS = 2048;

  /** Smallest EC key (the curve's order) accepted in a device certificate, in bits. */
  public static final int MIN_EC_BITS = 256;

  /** Why a credential is refused: the metric tag. */
  public enum Refusal {
    RESERVED_NAME,
    CERTIFICATE_EXPIRED,
    CERTIFICATE_NOT_YET_VALID,
    WEAK_KEY,
    WEAK_SIGNATURE
  }

  /** A credential refused by this policy: the message is for the client, a 400. */
  public static final class RefusedException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final Refusal refusal;

    RefusedException(Refusal refusal, String message) {
      super(message);
      this.refusal = refusal;
    }

    public Refusal refusal() {
      return refusal;
    }
  }

  private CredentialPolicy() {}

  /**
   * Checks that {@code credentials} may be given to a device at {@code now}.
   *
   * @throws RefusedException (an {@link IllegalArgumentException}) naming the rule broken
   */
  public static void check(DeviceCredentials credentials, Instant now) {
    if (credentials instanceof DeviceCredentials.AccessToken token) {
      checkToken(token.token());
    } else if (credentials instanceof DeviceCredentials.MqttBasic basic) {
      if (PROVISION_NAME.equals(basic.clientId()) || PROVISION_NAME.equals(basic.userName())) {
        throw reserved("an MQTT_BASIC clientId or userName");
      }
    } else if (credentials instanceof DeviceCredentials.X509Certificate certificate) {
      checkCertificate(certificate, now);
    }
  }

  /** Checks an access token given on its own (the {@code accessToken} of a device create). */
  public static void checkToken(String token) {
    if (PROVISION_NAME.equals(token)) {
      throw reserved("an access token");
    }
  }

  private static RefusedException reserved(String what) {
    return new RefusedException(
        Refusal.RESERVED_NAME,
        "\""
            + PROVISION_NAME
            + "\" cannot be "
            + what
            + ": that MQTT user name or client id starts device self-provisioning, so the device"
            + " could never connect with it");
  }

  private static void checkCertificate(DeviceCredentials.X509Certificate credential, Instant now) {
    java.security.cert.X509Certificate certificate = decode(credential.pem());
    if (now.isAfter(certificate.getNotAfter().toInstant())) {
      throw new RefusedException(
          Refusal.CERTIFICATE_EXPIRED,
          "X509_CERTIFICATE expired at " + certificate.getNotAfter().toInstant());
    }
    if (now.isBefore(certificate.getNotBefore().toInstant())) {
      throw new RefusedException(
          Refusal.CERTIFICATE_NOT_YET_VALID,
          "X509_CERTIFICATE is not valid before " + certificate.getNotBefore().toInstant());
    }
    String weakKey = weakKey(certificate.getPublicKey());
    if (weakKey != null) {
      throw new RefusedException(Refusal.WEAK_KEY, "X509_CERTIFICATE " + weakKey);
    }
    String signature = certificate.getSigAlgName().toUpperCase(Locale.ROOT).replace("-", "");
    if (signature.startsWith("MD2")
        || signature.startsWith("MD5")
        || signature.startsWith("SHA1")
        || signature.equals("SHAWITHRSA")) {
      throw new RefusedException(
          Refusal.WEAK_SIGNATURE,
          "X509_CERTIFICATE is signed with "
              + certificate.getSigAlgName()
              + "; MD5, MD2 and SHA-1 signatures are not accepted");
    }
  }

  private static @Nullable String weakKey(PublicKey key) {
    if (key instanceof RSAPublicKey rsa && rsa.getModulus().bitLength() < MIN_RSA_BITS) {
      return "has an RSA key of "
          + rsa.getModulus().bitLength()
          + " bits; at least "
          + MIN_RSA_BITS
          + " are required";
    }
    if (key instanceof ECPublicKey ec && ec.getParams().getOrder().bitLength() < MIN_EC_BITS) {
      return "has an EC key of "
          + ec.getParams().getOrder().bitLength()
          + " bits; at least "
          + MIN_EC_BITS
          + " are required";
    }
    if (key instanceof DSAKey || "DSA".equalsIgnoreCase(key.getAlgorithm())) {
      return "has a DSA key; use RSA (" + MIN_RSA_BITS + " bits or more), EC or EdDSA";
    }
    return null;
  }

  // The credential's PEM is the normalised one DeviceCredentials.X509Certificate.parse produced.
  private static java.security.cert.X509Certificate decode(String pem) {
    try {
      return (java.security.cert.X509Certificate)
          CertificateFactory.getInstance("X.509")
              .generateCertificate(
                  new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    } catch (CertificateException | RuntimeException e) {
      throw new IllegalArgumentException("X509_CERTIFICATE credentialsValue is not a certificate");
    }
  }
}
