package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Issues and verifies the REST API's bearer tokens: compact JWTs signed with HMAC-SHA256 (RFC 7519
 * / RFC 7515), carrying the user ({@code sub}), the token kind ({@code typ}: access or refresh),
 * {@code iat} and {@code exp}. Thread-safe.
 */
public final class JwtTokens {

  /** Which of the two tokens a JWT is. */
  public enum Kind {
    ACCESS,
    REFRESH
  }

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODER = Base64.getUrlDecoder();
  private static final String HEADER =
      ENCODER.encodeToString(
          "{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));

  private final SecretKeySpec key;
  private final Duration accessTtl;
  private final Duration refreshTtl;
  private final Clock clock;

  public JwtTokens(String secret, Duration accessTtl, Duration refreshTtl, Clock clock) {
    this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    this.accessTtl = accessTtl;
    this.refreshTtl = refreshTtl;
    this.clock = clock;
  }

  /** A signed token for {@code user}. */
  public String issue(String user, Kind kind) {
    long now = clock.millis() / 1000;
    long ttl = (kind == Kind.ACCESS ? accessTtl : refreshTtl).toSeconds();
    ObjectNode claims = MAPPER.createObjectNode();
    claims.put("sub", user);
    claims.put("typ", kind.name().toLowerCase(java.util.Locale.ROOT));
    claims.putArray("scopes").add("TENANT_ADMIN");
    claims.put("iat", now);
    claims.put("exp", now + ttl);
    String body =
        HEADER + "." + ENCODER.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
    return body + "." + ENCODER.encodeToString(sign(body));
  }

  /** The user of a valid, unexpired token of the given kind; empty for anything else. */
  public Optional<String> verify(String token, Kind kind) {
    int first = token.indexOf('.');
    int last = token.lastIndexOf('.');
    if (first < 0 || last <= first) {
      return Optional.empty();
    }
    String body = token.substring(0, last);
    try {
      byte[] signature = DECODER.decode(token.substring(last + 1));
      if (!MessageDigest.isEqual(signature, sign(body))) {
        return Optional.empty();
      }
      JsonNode claims = MAPPER.readTree(DECODER.decode(token.substring(first + 1, last)));
      boolean kindMatches = kind.name().equalsIgnoreCase(claims.path("typ").asText());
      boolean alive = claims.path("exp").asLong(0) > clock.millis() / 1000;
      String user = claims.path("sub").asText("");
      return kindMatches && alive && !user.isEmpty() ? Optional.of(user) : Optional.empty();
    } catch (IllegalArgumentException | java.io.IOException malformed) {
      return Optional.empty();
    }
  }

  public Duration accessTtl() {
    return accessTtl;
  }

  private byte[] sign(String body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      return mac.doFinal(body.getBytes(StandardCharsets.US_ASCII));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
