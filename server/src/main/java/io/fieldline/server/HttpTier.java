package io.fieldline.server;

import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.fieldline.export.SinkAdmin;
import io.fieldline.fleet.live.LiveData;
import io.fieldline.fleet.ota.OtaPackages;
import io.fieldline.fleet.rpc.RpcService;
import io.fieldline.server.console.ConsoleRoutes;
import io.fieldline.server.http.HttpListener;
import io.fieldline.server.rest.HttpJson;
import io.fieldline.server.rest.JwtTokens;
import io.fieldline.server.rest.RestApi;
import io.fieldline.server.ws.WsConfig;
import io.fieldline.server.ws.WsRoutes;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.http.DeviceApi;
import io.fieldline.transport.http.DeviceApiConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP tier: the REST and WebSocket APIs (ThingsBoard's shapes), ThingsBoard's HTTP device API
 * ({@code /api/v1/{token}/...}, submitting to the same gateway as the MQTT transport), health and
 * metrics on Pekko HTTP, in the device tier's actor system. It reads through the storage tier's
 * ports, and revokes a changed credential through {@code revocation}; readiness asks Cassandra and,
 * in a cluster, whether this node is on its ring. Export sinks are managed through {@code sinks}.
 *
 * @param binding the bound listener
 */
record HttpTier(ServerBinding binding) {

  private static final Logger LOG = LoggerFactory.getLogger(HttpTier.class);

  static HttpTier start(
      ServerConfig config,
      String adminPassword,
      String jwtSecret,
      CassandraStorage storage,
      CredentialsRevocation revocation,
      DeviceEvents events,
      DeviceTier devices,
      ClusterTier cluster,
      RpcService rpc,
      LiveData live,
      WsConfig wsConfig,
      PrometheusMeterRegistry metrics,
      MqttTier mqtt,
      OtaPackages ota,
      FirmwareDelivery firmware,
      DeviceProvisioning provisioning,
      SinkAdmin sinks,
      StopSteps stops) {
    JwtTokens tokens =
        new JwtTokens(jwtSecret, config.tokenTtl(), config.refreshTokenTtl(), Clock.systemUTC());
    WsRoutes websockets =
        new WsRoutes(
            wsConfig,
            tokens,
            storage.deviceRegistry(),
            storage.queries(),
            live,
            metrics,
            devices.system());
    RestApi api =
        new RestApi(
            config.adminUsername(),
            adminPassword,
            tokens,
            storage.deviceRegistry(),
            storage.credentialsStore(),
            revocation,
            storage.queries(),
            storage.telemetryStore(),
            events,
            config.payloadMaxStringValueLength(),
            storage.deadLetterQueries(),
            rpc,
            () -> storage.reachable().thenApply(up -> up && cluster.ready()),
            metrics,
            config.rest(),
            new ConsoleRoutes(mqtt.server().port(), mqtt.server().tlsPort()),
            websockets.routes(),
            storage.deviceProfiles(),
            ota,
            sinks);
    // The same config the actor system was built from (the whole server's).
    DeviceApiConfig deviceConfig = DeviceApiConfig.from(devices.system().settings().config());
    DeviceApi deviceApi =
        new DeviceApi(
            deviceConfig,
            storage.deviceRegistry(),
            storage.queries(),
            storage.deadLetters(),
            cluster.gateway(devices.gateway()),
            events,
            new PayloadParser(config.payloadTypeCast(), config.payloadMaxStringValueLength()),
            metrics,
            firmware,
            provisioning);
    // The body limit also at the parser (bodies no route reads; each API narrows it to its own),
    // and the TCP peer as an attribute for the per-address login throttle.
    ServerSettings defaults = ServerSettings.create(devices.system().classicSystem());
    ServerSettings settings =
        defaults
            .withRemoteAddressAttribute(true)
            .withParserSettings(
                defaults
                    .getParserSettings()
                    .withMaxContentLength(
                        Math.max(config.rest().maxBodyBytes(), deviceConfig.maxBodyBytes())));
    ServerBinding binding =
        new HttpListener(config.listener(), metrics)
            .bind(
                devices.system(),
                config.httpHost(),
                config.httpPort(),
                settings,
                // One place for every exception a route lets escape (Pekko's default would log
                // each with its stack trace and may answer its text).
                Directives.handleExceptions(
                    HttpJson.EXCEPTIONS, () -> Directives.concat(deviceApi.routes(), api.routes())))
            .toCompletableFuture()
            .join();
    stops.add(
        "HTTP",
        () ->
            StopSteps.await(
                binding.terminate(Duration.ofSeconds(5)), Duration.ofSeconds(10), "HTTP"));
    // Added after "HTTP", so run before it: WebSocket clients get a close frame and waiting long
    // polls an answer, then the listener stops.
    stops.add("WebSocket sessions", websockets::closeAll);
    stops.add("HTTP device API", deviceApi::close);
    LOG.info("[http] listening on {}", binding.localAddress());
    return new HttpTier(binding);
  }

  int port() {
    return binding.localAddress().getPort();
  }
}
