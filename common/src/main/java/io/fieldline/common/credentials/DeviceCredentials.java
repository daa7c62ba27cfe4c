package io.fieldline.common.credentials;

import io.fieldline.common.NameRules;
import io.fieldline.common.device.DeviceCredentialsStore;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Base64;
import java.util.Collection;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one credential of a device, ThingsBoard's three types. Each is validated when it is built, so
 * a value of this type is always one the registry can store and the transport can match; invalid
 * input fails with {@link IllegalArgumentException} naming the rule.
 */
public sealed interface DeviceCredentials
    permits DeviceCredentials.AccessToken,
        DeviceCredentials.MqttBasic,
        DeviceCredentials.X509Certificate {

  /** Most bytes of an MQTT string or password (MQTT 3.1.1 §1.5.3, §3.1.3.5). */
  int MQTT_MAX_BYTES = 65_535;

  CredentialsType type();

  /**
   * An access token: the MQTT user name a device connects with, no password.
   *
   * @param token a {@link NameRules} name
   */
  record AccessToken(String token) implements DeviceCredentials {

    public AccessToken {
      Objects.requireNonNull(token, "token");
      String violation = NameRules.violation(token, NameRules.MAX_LENGTH);
      if (violation != null) {
        throw new IllegalArgumentException("access token " + violation);
      }
    }

    @Override
    public CredentialsType type() {
      return CredentialsType.ACCESS_TOKEN;
    }
  }

  /**
   * MQTT basic credentials: a client id, a user name or both, and an optional password. Empty
   * strings count as absent.
   *
   * @param clientId the CONNECT client identifier the device must use, or null for any
   * @param userName the CONNECT user name the device must use, or null for any
   * @param password the password in clear on the way in (only its hash is stored); empty for "no
   *     password", null for "keep the current one, if any" when replacing, whatever the ids ({@link
   *     DeviceCredentialsStore#replaceCredentials}); always null on the way out
   */
  record MqttBasic(@Nullable String clientId, @Nullable String userName, @Nullable String password)
      implements DeviceCredentials {

    public MqttBasic {
      clientId = clientId == null || clientId.isEmpty() ? null : clientId;
      userName = userName == null || userName.isEmpty() ? null : userName;
      if (clientId == null && userName == null) {
        throw new IllegalArgumentException("MQTT_BASIC credentials need a clientId or a userName");
      }
      checkName("clientId", clientId);
      checkName("userName", userName);
      if (password != null && !password.isEmpty()) {
        if (userName == null) {
          // MQTT 3.1.1 §3.1.2.9: no password without a user name, so it could never match.
          throw new IllegalArgumentException(
              "an MQTT_BASIC password needs a userName (MQTT sends no password without one)");
        }
        if (password.getBytes(StandardCharsets.UTF_8).length > MQTT_MAX_BYTES) {
          throw new IllegalArgumentException(
              "an MQTT_BASIC password must have at most " + MQTT_MAX_BYTES + " bytes");
        }
      }
    }

    private static void checkName(String field, @Nullable String value) {
      if (value == null) {
        return;
      }
      // The stored-name rules: no control characters (MQTT forbids U+0000 anyway), at most 255.
      String violation = NameRules.violation(value, NameRules.MAX_LENGTH);
      if (violation != null) {
        throw new IllegalArgumentException("MQTT_BASIC " + field + " " + violation);
      }
    }

    /** Whether a (non-empty) password was given. */
    public boolean hasPassword() {
      return password != null && !password.isEmpty();
    }

    /** The same client id and user name, without the password (what may be shown). */
    public MqttBasic withoutPassword() {
      return new MqttBasic(clientId, userName, null);
    }

    @Override
    public CredentialsType type() {
      return CredentialsType.MQTT_BASIC;
    }

    /** Never prints the password. */
    @Override
    public String toString() {
      return "MqttBasic[clientId="
          + clientId
          + ", userName="
          + userName
          + ", password="
          + (password == null ? "null" : "hidden")
          + "]";
    }
  }

  /**
   * A device certificate, self-signed or signed by a CA: the device presents it in the TLS
   * handshake and is found by its {@link CertificateFingerprint}. Built only by {@link #parse}.
   */
  final class X509Certificate implements DeviceCredentials {

    private static final String BEGIN = "-----BEGIN CERTIFICATE-----";
    private static final String END = "-----END CERTIFICATE-----";

    private final String pem;
    private final String fingerprint;

    private X509Certificate(String pem, String fingerprint) {
      this.pem = pem;
      this.fingerprint = fingerprint;
    }

    /**
     * Parses one certificate with the JDK's {@link CertificateFactory}: PEM with its BEGIN/END
     * lines, or the bare Base64 body ThingsBoard stores (line breaks anywhere).
     *
     * @throws IllegalArgumentException unless the text holds exactly one X.509 certificate
     */
    public static X509Certificate parse(String text) {
      String trimmed = text.strip();
      String armored = trimmed.contains(BEGIN) ? trimmed : BEGIN + "\n" + trimmed + "\n" + END;
      Collection<? extends Certificate> certificates;
      try {
        certificates =
            CertificateFactory.getInstance("X.509")
                .generateCertificates(
                    new ByteArrayInputStream(armored.getBytes(StandardCharsets.US_ASCII)));
      } catch (CertificateException | RuntimeException e) {
        // The parser's own text (a Java exception message) is not for the client.
        throw new IllegalArgumentException(
            "X509_CERTIFICATE credentialsValue is not a PEM certificate");
      }
      if (certificates.size() != 1) {
        throw new IllegalArgumentException(
            "X509_CERTIFICATE credentialsValue must hold exactly one certificate, found "
                + certificates.size());
      }
      byte[] der;
      try {
        der = certificates.iterator().next().getEncoded();
      } catch (CertificateException e) {
        throw new IllegalArgumentException("X509_CERTIFICATE cannot be encoded");
      }
      String body = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der);
      return new X509Certificate(
          BEGIN + "\n" + body + "\n" + END + "\n", CertificateFingerprint.sha256(der));
    }

    /** The certificate as PEM, normalised: BEGIN/END lines, Base64 in lines of 64. */
    public String pem() {
      return pem;
    }

    /** The {@link CertificateFingerprint} the TLS listener finds the device by. */
    public String fingerprint() {
      return fingerprint;
    }

    @Override
    public CredentialsType type() {
      return CredentialsType.X509_CERTIFICATE;
    }

    @Override
    public boolean equals(@Nullable Object other) {
      return other instanceof X509Certificate that && fingerprint.equals(that.fingerprint);
    }

    @Override
    public int hashCode() {
      return fingerprint.hashCode();
    }

    @Override
    public String toString() {
      return "X509Certificate[sha256=" + fingerprint + "]";
    }
  }
}
