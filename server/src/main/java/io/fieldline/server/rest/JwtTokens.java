package io.fieldline.server.rest;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Issues and verifies the REST API's bearer tokens: compact JWTs signed with HMAC-SHA256 (RFC 7519
 * / RFC 7515) through Nimbus JOSE+JWT, carrying the user ({@code sub}), the token kind ({@code
 * typ}: {@code access} or {@code refresh}), ThingsBoard's {@code scopes} ({@code TENANT_ADMIN}),
 * {@code iat} and {@code exp} (seconds).
 *
 * <p>A token is accepted only if its header names HS256 (so neither {@code alg: none} nor another
 * algorithm keyed with the same secret), its signature verifies (the library compares in constant
 * time), it is of the asked kind, names a user, and its {@code exp} is after the injected clock's
 * current second. Thread-safe: the signer and the verifier are.
 */
public final class JwtTokens {

  /** Which of the two tokens a JWT is. */
  public enum Kind {
    ACCESS,
    REFRESH
  }

  private static final JWSHeader HEADER =
      new JWSHeader.Builder(JWSAlgorithm.HS256).type(JOSEObjectType.JWT).build();
  private static final List<String> SCOPES = List.of("TENANT_ADMIN");

  private final JWSSigner signer;
  private final JWSVerifier verifier;
  private final Duration accessTtl;
  private final Duration refreshTtl;
  private final Clock clock;

  /**
   * @param secret the signing key, at least 32 bytes in UTF-8 (HS256 needs 256 bits)
   * @param accessTtl lifetime of an access token
   * @param refreshTtl lifetime of a refresh token
   * @param clock the time tokens are issued at and checked against
   * @throws IllegalArgumentException if the secret is shorter than 32 bytes
   */
  public JwtTokens(String secret, Duration accessTtl, Duration refreshTtl, Clock clock) {
    byte[] key = secret.getBytes(StandardCharsets.UTF_8);
    try {
      this.signer = new MACSigner(key);
      this.verifier = new MACVerifier(key);
    } catch (JOSEException e) {
      throw new IllegalArgumentException("the JWT secret must have at least 32 bytes", e);
    }
    this.accessTtl = accessTtl;
    this.refreshTtl = refreshTtl;
    this.clock = clock;
  }

  /** A signed token for {@code user}. */
  public String issue(String user, Kind kind) {
    long now = clock.millis() / 1000;
    long ttl = (kind == Kind.ACCESS ? accessTtl : refreshTtl).toSeconds();
    JWTClaimsSet claims =
        new JWTClaimsSet.Builder()
            .subject(user)
            .claim("typ", kind.name().toLowerCase(Locale.ROOT))
            .claim("scopes", SCOPES)
            .issueTime(Date.from(Instant.ofEpochSecond(now)))
            .expirationTime(Date.from(Instant.ofEpochSecond(now + ttl)))
            .build();
    SignedJWT jwt = new SignedJWT(HEADER, claims);
    try {
      jwt.sign(signer);
    } catch (JOSEException e) {
      throw new IllegalStateException("HS256 signing failed", e);
    }
    return jwt.serialize();
  }

  /** The user of a valid, unexpired token of the given kind; empty for anything else. */
  public Optional<String> verify(String token, Kind kind) {
    try {
      SignedJWT jwt = SignedJWT.parse(token);
      // Checked before the signature: the verifier would also accept HS384/HS512 with this key.
      if (!JWSAlgorithm.HS256.equals(jwt.getHeader().getAlgorithm()) || !jwt.verify(verifier)) {
        return Optional.empty();
      }
      JWTClaimsSet claims = jwt.getJWTClaimsSet();
      boolean kindMatches = kind.name().equalsIgnoreCase(claims.getStringClaim("typ"));
      Date expiry = claims.getExpirationTime();
      boolean alive = expiry != null && expiry.getTime() / 1000 > clock.millis() / 1000;
      String user = claims.getSubject();
      return kindMatches && alive && user != null && !user.isEmpty()
          ? Optional.of(user)
          : Optional.empty();
    } catch (ParseException | JOSEException malformed) {
      return Optional.empty();
    }
  }
}
