package io.fieldline.server.rest;

import io.fieldline.common.DeadLetterQueries;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.TelemetryQueries;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The whole HTTP surface: {@code /health/*} and {@code /metrics} (open), {@code /api/auth/*}
 * (credentials in the body), everything else under {@code /api} behind a bearer token. Shapes
 * follow ThingsBoard's REST API; see docs/rest-api.md.
 */
public final class RestApi extends AllDirectives {

  private final AuthRoutes auth;
  private final DeviceRoutes devices;
  private final TelemetryRoutes telemetry;
  private final OpsRoutes ops;

  public RestApi(
      String adminUsername,
      String adminPassword,
      JwtTokens tokens,
      DeviceRegistry registry,
      TelemetryQueries queries,
      DeadLetterQueries deadLetters,
      Supplier<CompletionStage<Boolean>> readiness,
      PrometheusMeterRegistry prometheus) {
    this.auth = new AuthRoutes(adminUsername, adminPassword, tokens);
    this.devices = new DeviceRoutes(registry);
    this.telemetry = new TelemetryRoutes(queries, deadLetters);
    this.ops = new OpsRoutes(readiness, prometheus);
  }

  public Route routes() {
    return concat(
        ops.routes(),
        pathPrefix(
            "api",
            () ->
                concat(
                    pathPrefix("auth", auth::routes),
                    auth.authenticated(user -> concat(devices.routes(), telemetry.routes())))));
  }
}
