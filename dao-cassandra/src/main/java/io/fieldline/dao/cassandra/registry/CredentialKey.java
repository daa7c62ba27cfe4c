package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.credentials.CertificateFingerprint;
import io.fieldline.common.credentials.MqttBasicLogin;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Where a credential is indexed, so that at most one device holds it: an access token is its own
 * key in {@code device_by_token}; the others are keys of {@code device_by_credentials}, prefixed by
 * their type so the two kinds can never collide.
 *
 * <p>An MQTT_BASIC credential has one of ThingsBoard's three forms, after the fields it sets:
 * client id + user name, client id alone, user name alone. Its key is the SHA-256 of the form's tag
 * and its fields separated by U+0000 (which neither may contain, MQTT 3.1.1 §1.5.3), so the forms
 * stay distinct ({@code ("a", null)} is not {@code (null, "a")}) and a key has a fixed size however
 * long the names. An X.509 key is the certificate's {@link CertificateFingerprint}.
 *
 * @param token whether the key is an access token (table {@code device_by_token})
 * @param value the token, or the {@code device_by_credentials} key
 */
record CredentialKey(boolean token, String value) {

  private static final String BASIC = "mqtt_basic:";
  private static final String X509 = "x509:";

  static CredentialKey accessToken(String token) {
    return new CredentialKey(true, token);
  }

  static CredentialKey certificate(String sha256Fingerprint) {
    return new CredentialKey(false, X509 + sha256Fingerprint);
  }

  /** The key of the basic credential with these fields (at least one of them set). */
  static CredentialKey basic(@Nullable String clientId, @Nullable String userName) {
    String form;
    if (clientId != null && userName != null) {
      form = "client_id+user_name\u0000" + clientId + "\u0000" + userName;
    } else if (clientId != null) {
      form = "client_id\u0000" + clientId;
    } else if (userName != null) {
      form = "user_name\u0000" + userName;
    } else {
      throw new IllegalArgumentException("a basic credential has a client id or a user name");
    }
    return new CredentialKey(false, BASIC + sha256Hex(form));
  }

  /**
   * The keys a CONNECT is tried under, in the contract's order: client id + user name, client id,
   * user name (only the forms its fields allow).
   */
  static List<CredentialKey> candidates(MqttBasicLogin login) {
    String clientId = emptyToNull(login.clientId());
    String userName = emptyToNull(login.userName());
    List<CredentialKey> keys = new ArrayList<>(3);
    if (clientId != null && userName != null) {
      keys.add(basic(clientId, userName));
    }
    if (clientId != null) {
      keys.add(basic(clientId, null));
    }
    if (userName != null) {
      keys.add(basic(null, userName));
    }
    return keys;
  }

  /** What the REST API shows as {@code credentialsId}: the value without its type prefix. */
  String credentialsId() {
    if (value.startsWith(BASIC)) {
      return value.substring(BASIC.length());
    }
    if (value.startsWith(X509)) {
      return value.substring(X509.length());
    }
    return value;
  }

  private static @Nullable String emptyToNull(@Nullable String text) {
    return text == null || text.isEmpty() ? null : text;
  }

  private static String sha256Hex(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
