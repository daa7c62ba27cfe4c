package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.fieldline.server.rest.JwtTokens.Kind;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import org.junit.jupiter.api.Test;

class JwtTokensTest {

  private static final String SECRET = "a-test-secret-of-at-least-32-characters";
  private static final String USER = "admin@fieldline.local";
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
  private static final Duration ACCESS_TTL = Duration.ofHours(2);
  private static final Duration REFRESH_TTL = Duration.ofDays(7);

  private static JwtTokens tokens(String secret, Instant now) {
    return new JwtTokens(secret, ACCESS_TTL, REFRESH_TTL, Clock.fixed(now, ZoneOffset.UTC));
  }

  private static JwtTokens tokensAt(Instant now) {
    return tokens(SECRET, now);
  }

  private static JWTClaimsSet.Builder validClaims(String kind) {
    return new JWTClaimsSet.Builder()
        .subject(USER)
        .claim("typ", kind)
        .claim("scopes", List.of("TENANT_ADMIN"))
        .issueTime(Date.from(NOW))
        .expirationTime(Date.from(NOW.plus(ACCESS_TTL)));
  }

  private static String signed(JWSAlgorithm algorithm, String secret, JWTClaimsSet claims)
      throws Exception {
    SignedJWT jwt =
        new SignedJWT(new JWSHeader.Builder(algorithm).type(JOSEObjectType.JWT).build(), claims);
    jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
    return jwt.serialize();
  }

  @Test
  void should_return_the_user_when_a_fresh_token_of_the_asked_kind_is_verified() {
    JwtTokens tokens = tokensAt(NOW);
    assertThat(tokens.verify(tokens.issue(USER, Kind.ACCESS), Kind.ACCESS)).contains(USER);
    assertThat(tokens.verify(tokens.issue(USER, Kind.REFRESH), Kind.REFRESH)).contains(USER);
  }

  @Test
  void should_carry_sub_typ_scopes_iat_and_exp_in_an_hs256_jwt_when_issued() throws Exception {
    JwtTokens tokens = tokensAt(NOW);
    SignedJWT access = SignedJWT.parse(tokens.issue(USER, Kind.ACCESS));
    SignedJWT refresh = SignedJWT.parse(tokens.issue(USER, Kind.REFRESH));

    assertThat(access.getHeader().getAlgorithm()).isEqualTo(JWSAlgorithm.HS256);
    assertThat(access.getHeader().getType()).isEqualTo(JOSEObjectType.JWT);
    JWTClaimsSet claims = access.getJWTClaimsSet();
    assertThat(claims.getSubject()).isEqualTo(USER);
    assertThat(claims.getStringClaim("typ")).isEqualTo("access");
    assertThat(claims.getStringListClaim("scopes")).containsExactly("TENANT_ADMIN");
    assertThat(claims.getIssueTime().toInstant()).isEqualTo(NOW);
    assertThat(claims.getExpirationTime().toInstant()).isEqualTo(NOW.plus(ACCESS_TTL));
    assertThat(refresh.getJWTClaimsSet().getStringClaim("typ")).isEqualTo("refresh");
    assertThat(refresh.getJWTClaimsSet().getExpirationTime().toInstant())
        .isEqualTo(NOW.plus(REFRESH_TTL));
  }

  @Test
  void should_reject_a_token_when_it_was_signed_with_another_secret() {
    String foreign =
        tokens("another-secret-also-at-least-32-characters", NOW).issue(USER, Kind.ACCESS);
    assertThat(tokensAt(NOW).verify(foreign, Kind.ACCESS)).isEmpty();
  }

  @Test
  void should_reject_a_token_when_its_algorithm_is_none() {
    String unsecured = new PlainJWT(validClaims("access").build()).serialize();
    assertThat(unsecured).endsWith(".");
    assertThat(tokensAt(NOW).verify(unsecured, Kind.ACCESS)).isEmpty();

    // A genuine token whose header was rewritten to "none", with and without its signature.
    String genuine = tokensAt(NOW).issue(USER, Kind.ACCESS);
    String[] parts = genuine.split("\\.");
    String none = Base64URL.encode("{\"alg\":\"none\",\"typ\":\"JWT\"}").toString();
    assertThat(tokensAt(NOW).verify(none + "." + parts[1] + "." + parts[2], Kind.ACCESS)).isEmpty();
    assertThat(tokensAt(NOW).verify(none + "." + parts[1] + ".", Kind.ACCESS)).isEmpty();
  }

  @Test
  void should_reject_a_token_when_it_is_signed_with_another_hmac_algorithm_and_the_same_secret()
      throws Exception {
    String secret = "a-secret-long-enough-for-hs512-which-needs-sixty-four-bytes-0123456789";
    JwtTokens tokens = tokens(secret, NOW);
    JWTClaimsSet claims = validClaims("access").build();
    assertThat(tokens.verify(signed(JWSAlgorithm.HS256, secret, claims), Kind.ACCESS))
        .as("the same claims under HS256 are valid")
        .contains(USER);
    assertThat(tokens.verify(signed(JWSAlgorithm.HS384, secret, claims), Kind.ACCESS)).isEmpty();
    assertThat(tokens.verify(signed(JWSAlgorithm.HS512, secret, claims), Kind.ACCESS)).isEmpty();
  }

  @Test
  void should_reject_a_token_when_the_clock_reaches_its_expiry() {
    String access = tokensAt(NOW).issue(USER, Kind.ACCESS);
    String refresh = tokensAt(NOW).issue(USER, Kind.REFRESH);

    Instant lastSecond = NOW.plus(ACCESS_TTL).minusSeconds(1);
    assertThat(tokensAt(lastSecond).verify(access, Kind.ACCESS)).contains(USER);
    assertThat(tokensAt(NOW.plus(ACCESS_TTL)).verify(access, Kind.ACCESS)).isEmpty();
    assertThat(tokensAt(NOW.plus(ACCESS_TTL)).verify(refresh, Kind.REFRESH)).contains(USER);
    assertThat(tokensAt(NOW.plus(REFRESH_TTL)).verify(refresh, Kind.REFRESH)).isEmpty();
  }

  @Test
  void should_reject_a_token_when_it_has_no_expiry_or_no_user() throws Exception {
    JwtTokens tokens = tokensAt(NOW);
    JWTClaimsSet noExpiry = validClaims("access").expirationTime(null).build();
    JWTClaimsSet noUser = validClaims("access").subject(null).build();
    JWTClaimsSet emptyUser = validClaims("access").subject("").build();
    assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, noExpiry), Kind.ACCESS)).isEmpty();
    assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, noUser), Kind.ACCESS)).isEmpty();
    assertThat(tokens.verify(signed(JWSAlgorithm.HS256, SECRET, emptyUser), Kind.ACCESS)).isEmpty();
  }

  @Test
  void should_reject_a_token_when_it_is_used_as_the_other_kind() {
    JwtTokens tokens = tokensAt(NOW);
    assertThat(tokens.verify(tokens.issue(USER, Kind.REFRESH), Kind.ACCESS)).isEmpty();
    assertThat(tokens.verify(tokens.issue(USER, Kind.ACCESS), Kind.REFRESH)).isEmpty();
  }

  @Test
  void should_reject_a_token_when_its_claims_were_changed_after_signing() {
    String genuine = tokensAt(NOW).issue(USER, Kind.ACCESS);
    String[] parts = genuine.split("\\.");
    String claims = new String(Base64URL.from(parts[1]).decode(), StandardCharsets.UTF_8);
    String forged = Base64URL.encode(claims.replace(USER, "mallory@example.com")).toString();
    assertThat(forged).isNotEqualTo(parts[1]);
    assertThat(tokensAt(NOW).verify(parts[0] + "." + forged + "." + parts[2], Kind.ACCESS))
        .isEmpty();
  }

  @Test
  void should_reject_a_token_when_it_is_not_a_jwt() {
    JwtTokens tokens = tokensAt(NOW);
    String arrayHeader = Base64URL.encode("[\"HS256\"]").toString();
    String numberClaims = Base64URL.encode("42").toString();
    String genuine = tokens.issue(USER, Kind.ACCESS);
    String[] parts = genuine.split("\\.");
    List<String> malformed =
        List.of(
            "",
            "garbage",
            "a.b",
            "a.b.c",
            "..",
            "...",
            "a.b.c.d.e",
            "!!!.@@@.###",
            arrayHeader + "." + parts[1] + "." + parts[2],
            parts[0] + "." + numberClaims + "." + parts[2],
            genuine + "x",
            genuine.substring(0, genuine.length() - 2));
    for (String garbage : malformed) {
      assertThat(tokens.verify(garbage, Kind.ACCESS)).as("'%s'", garbage).isEmpty();
    }
  }

  @Test
  void should_accept_tokens_of_the_hand_written_signer_when_nodes_share_the_secret() {
    // Issued by the javax.crypto implementation this class replaced, same secret and clock: during
    // a rolling upgrade a node of either version must accept the other's tokens.
    String access =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZG1pbkBmaWVsZGxpbmUubG9jYWwiLCJ0eXAiOiJh"
            + "Y2Nlc3MiLCJzY29wZXMiOlsiVEVOQU5UX0FETUlOIl0sImlhdCI6MTc2NzIyNTYwMCwiZXhwIjoxNzY3MjMy"
            + "ODAwfQ.aPHBtwGzlG6P1QkPnrpwUsJ-8G7MI-sKowBwUdfMJoQ";
    String refresh =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZG1pbkBmaWVsZGxpbmUubG9jYWwiLCJ0eXAiOiJy"
            + "ZWZyZXNoIiwic2NvcGVzIjpbIlRFTkFOVF9BRE1JTiJdLCJpYXQiOjE3NjcyMjU2MDAsImV4cCI6MTc2Nzgz"
            + "MDQwMH0.bQonNxGeb6NO80kiPp4IjdoV2qZZ0W2BwaRVp8lyA3w";
    JwtTokens tokens = tokensAt(NOW);
    assertThat(tokens.verify(access, Kind.ACCESS)).contains(USER);
    assertThat(tokens.verify(refresh, Kind.REFRESH)).contains(USER);
    assertThat(tokens.verify(refresh, Kind.ACCESS)).isEmpty();
  }

  @Test
  void should_refuse_the_secret_when_it_is_shorter_than_32_bytes() {
    assertThatThrownBy(() -> tokens("only-31-characters-long-secret!", NOW))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(tokens("exactly-32-characters-long-key!!", NOW).issue(USER, Kind.ACCESS))
        .isNotEmpty();
  }
}
