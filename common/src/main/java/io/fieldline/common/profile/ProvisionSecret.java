package io.fieldline.common.profile;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A profile's provision secret as it is kept: a random 16-byte salt of its own and the SHA-256 of
 * the salt followed by the secret's UTF-8 bytes. The secret itself is never stored or logged, and
 * is checked in constant time ({@link MessageDigest#isEqual}).
 *
 * <p>One fast hash, not a slow password hash: a secret is compared on every provisioning request,
 * whose rate the provisioning service limits per source address and in total (the defence against
 * guessing it online), and the secrets ThingsBoard's tools generate are 20 random characters, which
 * no offline search over a stolen hash can reach either. A short secret an operator types himself
 * is only as strong as those rate limits (docs/rest-api.md says so). Immutable.
 */
public final class ProvisionSecret {

  /** Bytes of salt per secret. */
  public static final int SALT_BYTES = 16;

  private final byte[] salt;
  private final byte[] hash;

  private ProvisionSecret(byte[] salt, byte[] hash) {
    this.salt = salt;
    this.hash = hash;
  }

  /** Hashes {@code secret} with a new random salt. */
  public static ProvisionSecret hash(String secret, SecureRandom random) {
    Objects.requireNonNull(secret, "secret");
    byte[] salt = new byte[SALT_BYTES];
    random.nextBytes(salt);
    return new ProvisionSecret(salt, digest(salt, secret));
  }

  /** A secret as read back from storage. */
  public static ProvisionSecret stored(byte[] salt, byte[] hash) {
    if (salt.length != SALT_BYTES || hash.length != 32) {
      throw new IllegalArgumentException(
          "a stored provision secret needs 16 bytes of salt and 32 of hash");
    }
    return new ProvisionSecret(salt.clone(), hash.clone());
  }

  /** Whether {@code candidate} is the secret; takes the same time whatever the answer. */
  public boolean matches(String candidate) {
    return MessageDigest.isEqual(hash, digest(salt, candidate));
  }

  /** The salt, for storage. */
  public byte[] salt() {
    return salt.clone();
  }

  /** The hash, for storage. */
  public byte[] hash() {
    return hash.clone();
  }

  private static byte[] digest(byte[] salt, String secret) {
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update(salt);
      return sha256.digest(secret.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  @Override
  public boolean equals(@Nullable Object other) {
    return other instanceof ProvisionSecret that
        && Arrays.equals(salt, that.salt)
        && Arrays.equals(hash, that.hash);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(salt) + Arrays.hashCode(hash);
  }

  /** Never prints the hash. */
  @Override
  public String toString() {
    return "ProvisionSecret[hidden]";
  }
}
