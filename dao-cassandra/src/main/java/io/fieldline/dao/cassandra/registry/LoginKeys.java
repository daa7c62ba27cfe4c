package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.credentials.MqttBasicLogin;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * The cache keys of MQTT basic logins: client id, user name and an HMAC-SHA256 of the password
 * under a 256-bit key drawn from {@link SecureRandom} when the cache is built and never stored. The
 * cache can thus tell the same password again without keeping it: the key dies with the process,
 * and the MAC is not a hash an offline guesser can test passwords against without it.
 *
 * <p>Thread-safe: each call gets its own {@link Mac} (they are not thread-safe; getting one costs
 * microseconds, against the milliseconds of the bcrypt check it saves).
 */
final class LoginKeys {

  private static final String ALGORITHM = "HmacSHA256";

  /** A login as the cache keys it; {@code passwordMac} is null when no password was presented. */
  record LoginKey(
      @Nullable String clientId, @Nullable String userName, @Nullable String passwordMac) {}

  private final SecretKeySpec key;

  LoginKeys() {
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    this.key = new SecretKeySpec(secret, ALGORITHM);
  }

  LoginKey of(MqttBasicLogin login) {
    byte[] password = login.password();
    return new LoginKey(
        emptyToNull(login.clientId()),
        emptyToNull(login.userName()),
        password == null ? null : mac(password));
  }

  private String mac(byte[] password) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return Base64.getEncoder().withoutPadding().encodeToString(mac.doFinal(password));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JDK has " + ALGORITHM, e);
    }
  }

  private static @Nullable String emptyToNull(@Nullable String text) {
    return text == null || text.isEmpty() ? null : text;
  }
}
