package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RemoteAddress;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;

/**
 * {@code POST /api/auth/login} and {@code POST /api/auth/token} (refresh), and the directive that
 * guards every other {@code /api} call: a valid access token in {@code X-Authorization: Bearer
 * <token>} (ThingsBoard's header) or the standard {@code Authorization} header, else 401. Logins
 * are throttled per user name and per source address ({@link LoginThrottle}): 429 with {@code
 * Retry-After}.
 */
final class AuthRoutes extends AllDirectives {

  private final String adminUsername;
  private final byte[] adminPassword;
  private final JwtTokens tokens;
  private final LoginThrottle throttle;
  private final RestMetrics metrics;

  AuthRoutes(
      String adminUsername,
      String adminPassword,
      JwtTokens tokens,
      LoginThrottle throttle,
      RestMetrics metrics) {
    this.adminUsername = adminUsername;
    this.adminPassword = adminPassword.getBytes(StandardCharsets.UTF_8);
    this.tokens = tokens;
    this.throttle = throttle;
    this.metrics = metrics;
  }

  Route routes() {
    return concat(
        path(
            PathMatchers.segment("login"),
            () ->
                post(
                    () ->
                        extractRequest(
                            request ->
                                entity(
                                    Unmarshaller.entityToString(),
                                    body -> complete(login(body, sourceAddress(request))))))),
        path(
            PathMatchers.segment("token"),
            () ->
                post(
                    () -> entity(Unmarshaller.entityToString(), body -> complete(refresh(body))))));
  }

  /** Runs {@code inner} with the authenticated user, or answers 401. */
  Route authenticated(Function<String, Route> inner) {
    return optionalHeaderValueByName(
        "X-Authorization",
        custom ->
            optionalHeaderValueByName(
                "Authorization",
                standard -> {
                  Optional<String> user =
                      bearer(custom.or(() -> standard))
                          .flatMap(token -> tokens.verify(token, JwtTokens.Kind.ACCESS));
                  return user.map(inner)
                      .orElseGet(() -> complete(HttpJson.error(401, "Authentication failed")));
                }));
  }

  private HttpResponse login(String body, String address) {
    JsonNode json = parse(body);
    String username = json.path("username").asText("");
    Optional<Duration> wait = throttle.retryAfter(username, address);
    if (wait.isPresent()) {
      metrics.loginFailed(RestMetrics.LoginFailure.THROTTLED);
      // Whole seconds, rounded up: a client that waits exactly this long is let in.
      long seconds = Math.max(1, (wait.get().toMillis() + 999) / 1000);
      return HttpJson.error(429, "Too many failed logins; retry after " + seconds + " s")
          .addHeader(RawHeader.create("Retry-After", Long.toString(seconds)));
    }
    byte[] password = json.path("password").asText("").getBytes(StandardCharsets.UTF_8);
    // Constant-time comparison for the password: timing must not reveal how much matched.
    boolean passwordOk = MessageDigest.isEqual(password, adminPassword);
    if (!username.equals(adminUsername) || !passwordOk) {
      throttle.failed(username, address);
      metrics.loginFailed(RestMetrics.LoginFailure.BAD_CREDENTIALS);
      return HttpJson.error(401, "Invalid username or password");
    }
    throttle.succeeded(username);
    return tokenPair(username);
  }

  // The TCP peer (the listener sets the remote-address attribute); never X-Forwarded-For, which a
  // client chooses freely.
  private static String sourceAddress(HttpRequest request) {
    return request
        .getAttribute(AttributeKeys.remoteAddress)
        .flatMap(RemoteAddress::getAddress)
        .map(InetAddress::getHostAddress)
        .orElse("unknown");
  }

  private HttpResponse refresh(String body) {
    Optional<String> user =
        tokens.verify(parse(body).path("refreshToken").asText(""), JwtTokens.Kind.REFRESH);
    return user.map(this::tokenPair).orElseGet(() -> HttpJson.error(401, "Invalid refresh token"));
  }

  private HttpResponse tokenPair(String user) {
    ObjectNode response = JsonViews.MAPPER.createObjectNode();
    response.put("token", tokens.issue(user, JwtTokens.Kind.ACCESS));
    response.put("refreshToken", tokens.issue(user, JwtTokens.Kind.REFRESH));
    return HttpJson.ok(response);
  }

  private static Optional<String> bearer(Optional<String> header) {
    return header
        .map(String::trim)
        .filter(value -> value.regionMatches(true, 0, "Bearer ", 0, 7))
        .map(value -> value.substring(7).trim());
  }

  private static JsonNode parse(String body) {
    try {
      JsonNode json = JsonViews.MAPPER.readTree(body);
      return json == null ? JsonViews.MAPPER.createObjectNode() : json;
    } catch (IOException e) {
      return JsonViews.MAPPER.createObjectNode();
    }
  }
}
