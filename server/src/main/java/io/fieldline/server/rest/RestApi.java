package io.fieldline.server.rest;

import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.deadletter.DeadLetterQueries;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.export.SinkAdmin;
import io.fieldline.fleet.ota.OtaPackages;
import io.fieldline.fleet.rpc.RpcService;
import io.fieldline.server.console.ConsoleRoutes;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The whole HTTP surface: {@code /health/*} and {@code /metrics} (open), {@code /api/auth/*}
 * (credentials in the body), the WebSocket API under {@code /api/ws} (its token in the first
 * message or the legacy query parameter), everything else under {@code /api} behind a bearer token.
 * Shapes follow ThingsBoard's REST API; see docs/rest-api.md. Around all of it: the CORS policy,
 * request bodies limited to {@link RestConfig#maxBodyBytes()} (413), JSON error bodies for Pekko's
 * own rejections, and every 4xx answer counted and logged ({@link RejectedRequests}). The WebSocket
 * API's route is handed in by the composition root: the {@code ws} package builds on this one (its
 * token, its error answers), so this one does not name it. Export sinks ({@code
 * /api/fieldline/sinks}) are managed through the {@link SinkAdmin} handed in.
 */
public final class RestApi extends AllDirectives {

  /**
   * Pekko's own rejection answers (unknown path 404, wrong method 405, malformed query parameter
   * 400, body over the size limit 413) with the ThingsBoard error body the routes use.
   */
  private static final RejectionHandler JSON_REJECTIONS =
      RejectionHandler.defaultHandler()
          .mapRejectionResponse(
              response ->
                  HttpJson.error(response.status().intValue(), HttpJson.rejectionMessage(response))
                      .addHeaders(response.getHeaders()));

  private final AuthRoutes auth;
  private final DeviceRoutes devices;
  private final Route profiles;
  private final CredentialsRoutes credentials;
  private final TelemetryRoutes telemetry;
  private final AttributeRoutes attributes;
  private final RejectedRequests rejected;
  private final OpsRoutes ops;
  private final RpcRoutes rpc;
  private final ConsoleRoutes console;
  private final Cors cors;
  private final Route websockets;
  private final OtaPackageRoutes otaPackages;
  private final SinkRoutes sinks;
  private final long maxBodyBytes;

  public RestApi(
      String adminUsername,
      String adminPassword,
      JwtTokens tokens,
      DeviceRegistry registry,
      DeviceCredentialsStore credentialsStore,
      CredentialsRevocation revocation,
      TelemetryQueries queries,
      TelemetryStore store,
      DeviceEvents events,
      int maxStringValueLength,
      DeadLetterQueries deadLetters,
      RpcService rpc,
      Supplier<CompletionStage<Boolean>> readiness,
      PrometheusMeterRegistry prometheus,
      RestConfig config,
      ConsoleRoutes console,
      Route websockets,
      DeviceProfileStore profileStore,
      OtaPackages ota,
      SinkAdmin sinks) {
    LoginThrottle throttle = new LoginThrottle(config, System::nanoTime);
    this.auth =
        new AuthRoutes(
            adminUsername, adminPassword, tokens, throttle, new RestMetrics(prometheus, throttle));
    this.cors = new Cors(config);
    this.maxBodyBytes = config.maxBodyBytes();
    CredentialRefusals refusals = new CredentialRefusals(prometheus);
    this.devices =
        new DeviceRoutes(registry, revocation, profileStore, ota.assignments(), refusals);
    this.profiles = new DeviceProfileRoutes(profileStore, ota.assignments()).routes();
    this.credentials = new CredentialsRoutes(credentialsStore, revocation, refusals);
    this.telemetry = new TelemetryRoutes(queries, store, registry, deadLetters, config.queries());
    this.attributes = new AttributeRoutes(registry, store, queries, events, maxStringValueLength);
    this.rejected = new RejectedRequests(prometheus);
    this.ops = new OpsRoutes(readiness, prometheus);
    this.rpc = new RpcRoutes(rpc, registry);
    this.console = console;
    this.websockets = websockets;
    this.otaPackages = new OtaPackageRoutes(ota, registry);
    this.sinks = new SinkRoutes(sinks);
  }

  public Route routes() {
    return extractRequest(
        request -> mapResponse(response -> rejected.observe(request, response), this::served));
  }

  private Route served() {
    return cors.wrap(
        () ->
            handleRejections(
                JSON_REJECTIONS,
                () ->
                    withSizeLimit(
                        maxBodyBytes, () -> concat(ops.routes(), console.routes(), api()))));
  }

  private Route api() {
    return pathPrefix(
        "api",
        () ->
            concat(
                // Rejections answered here: a rejected login (body too large) must not fall
                // through to the token check below and become a 401.
                pathPrefix("auth", () -> handleRejections(JSON_REJECTIONS, auth::routes)),
                // Authenticated by their first message (or the legacy ?token=), not the header.
                websockets,
                auth.authenticated(
                    user ->
                        concat(
                            credentials.routes(),
                            devices.routes(),
                            profiles,
                            telemetry.routes(user),
                            attributes.routes(user),
                            rpc.routes(),
                            otaPackages.routes(),
                            sinks.routes()))));
  }
}
