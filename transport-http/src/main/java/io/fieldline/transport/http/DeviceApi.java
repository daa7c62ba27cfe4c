package io.fieldline.transport.http;

import io.fieldline.common.StoreException;
import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.common.rpc.ClientRpcAnswers;
import io.fieldline.transport.http.DeviceApiMetrics.Refusal;
import io.fieldline.transport.http.DeviceApiMetrics.Resource;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RemoteAddress;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ThingsBoard's HTTP device API on the server's HTTP listener, the device authenticated by the
 * access token in the path (looked up in the registry's cache, like an MQTT CONNECT's user name),
 * but for provisioning, which has no token:
 *
 * <ul>
 *   <li>{@code POST /api/v1/{token}/telemetry}, {@code POST .../attributes}: stored, then 200
 *       ({@link Uploads});
 *   <li>{@code GET .../attributes?clientKeys=&sharedKeys=}: {@code {"client":{..},"shared":{..}}};
 *   <li>{@code GET .../attributes/updates?timeout=}, {@code GET .../rpc?timeout=}: long polls
 *       ({@link LongPolls});
 *   <li>{@code POST .../rpc/{id}}: the reply to a server-side RPC request ({@link RpcReplies});
 *   <li>{@code POST .../rpc}: client-side RPC ({@link ClientRpcAnswers});
 *   <li>{@code GET .../firmware?title=&version=&size=&chunk=}: the assigned firmware ({@link
 *       FirmwareDownloads});
 *   <li>{@code POST /api/v1/provision}: self-provisioning, answered 200 with the status in the
 *       body, by the node's provisioning service (its own limits, not the token budgets).
 * </ul>
 *
 * Refusals: an unknown token 401, a malformed body or parameter 400, a body over {@code
 * fieldline.mqtt.max-packet-size} 413, a method the resource does not serve 405, too many uploads
 * in flight, polls waiting, requests per second or unknown tokens from the source address 429 with
 * {@code Retry-After}, storage trouble 503; each counted ({@code
 * fieldline.http.device.rejected{reason}}) and logged rate-limited, the token never. Error bodies
 * are the REST API's ({@code {"status":…,"message":…,"errorCode":…}}).
 *
 * <p>Every path under {@code /api/v1/} is this API's: one that is none of the above answers 404
 * here, also when the API is disabled, so that no device path (with its token) reaches the REST API
 * and its log. See docs/http-device-api.md. Thread-safe.
 */
public final class DeviceApi extends AllDirectives implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DeviceApi.class);
  private static final CompletableFuture<List<AttributeKvEntry>> NONE =
      CompletableFuture.completedFuture(List.of());

  private final DeviceApiConfig config;
  private final DeviceRegistry registry;
  private final TelemetryQueries queries;
  private final DeviceApiMetrics metrics;
  private final DeviceBudgets budgets;
  private final RpcReplies replies;
  private final LongPolls polls;
  private final Uploads uploads;
  private final ClientRpcAnswers clientRpc;
  private final FailedAuthBudgets failedAuth;
  private final FirmwareDownloads firmware;
  private final DeviceProvisioning provisioning;
  private final ScheduledThreadPoolExecutor timer;
  private final RejectionHandler rejections;
  private final LongSupplier nanoClock;

  /**
   * Who calls: the token in the path, the TCP peer's address when the listener gives it, and the
   * end of its connection when the listener signals it.
   */
  private record Caller(
      String token, @Nullable InetAddress address, @Nullable ClientConnection connection) {
    String who() {
      return address == null ? "-" : address.getHostAddress();
    }
  }

  /**
   * @param gateway where uploads go: the device's actor, on its owner node in a cluster
   * @param events the device events of the whole cluster, which the long polls listen to
   */
  public DeviceApi(
      DeviceApiConfig config,
      DeviceRegistry registry,
      TelemetryQueries queries,
      DeadLetterStore deadLetters,
      DeviceInbox gateway,
      DeviceEvents events,
      PayloadParser parser,
      MeterRegistry meterRegistry,
      FirmwareDelivery firmwareDelivery,
      DeviceProvisioning provisioning) {
    this(
        config,
        registry,
        queries,
        deadLetters,
        gateway,
        events,
        parser,
        meterRegistry,
        firmwareDelivery,
        provisioning,
        System::nanoTime);
  }

  /** With a test clock ({@code nanoClock} as {@link System#nanoTime()}). */
  DeviceApi(
      DeviceApiConfig config,
      DeviceRegistry registry,
      TelemetryQueries queries,
      DeadLetterStore deadLetters,
      DeviceInbox gateway,
      DeviceEvents events,
      PayloadParser parser,
      MeterRegistry meterRegistry,
      FirmwareDelivery firmwareDelivery,
      DeviceProvisioning provisioning,
      LongSupplier nanoClock) {
    this.config = config;
    this.nanoClock = nanoClock;
    this.registry = registry;
    this.queries = queries;
    this.timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, "fieldline-http-device-timer");
              thread.setDaemon(true);
              return thread;
            });
    timer.setRemoveOnCancelPolicy(true);
    this.budgets = new DeviceBudgets(config, nanoClock);
    this.failedAuth =
        new FailedAuthBudgets(
            config.failedAuthBurst(),
            config.failedAuthRefill(),
            config.failedAuthMaxAddresses(),
            nanoClock);
    this.metrics = new DeviceApiMetrics(meterRegistry, budgets::polls);
    this.replies = new RpcReplies(config.maxPendingRpcPerDevice(), timer, metrics);
    this.polls =
        new LongPolls(events, budgets, replies, timer, metrics, nanoClock, config.maxPolls());
    this.uploads =
        new Uploads(
            gateway,
            parser,
            deadLetters,
            config.invalidPayload(),
            budgets,
            metrics,
            System::currentTimeMillis);
    this.clientRpc =
        new ClientRpcAnswers(
            config.maxBodyBytes(), config.maxWritesPerDevice(), System::currentTimeMillis);
    this.firmware = new FirmwareDownloads(firmwareDelivery, metrics);
    this.provisioning = provisioning;
    this.rejections =
        RejectionHandler.defaultHandler()
            .mapRejectionResponse(
                response -> {
                  int status = response.status().intValue();
                  String message = HttpErrors.rejectionMessage(response);
                  metrics.refused(Refusal.of(status), "-", message);
                  return HttpErrors.error(status, message).addHeaders(response.getHeaders());
                });
    timer.scheduleWithFixedDelay(this::sweep, 10, 10, TimeUnit.SECONDS);
  }

  // Forgets what no one uses any more. Never throws: a scheduled task that throws runs no more.
  private void sweep() {
    try {
      budgets.sweep();
      failedAuth.sweep();
      polls.sweep();
    } catch (RuntimeException e) {
      LOG.error("[http-device] sweep failed", e);
    }
  }

  /**
   * The routes, to be tried before the REST API's: every path under {@code /api/v1/} (404 for one
   * that is no resource here, and for all of them when the API is disabled).
   */
  public Route routes() {
    return pathPrefix(
        PathMatchers.segment("api").slash("v1"),
        () -> config.enabled() ? concat(provision(), resources(), notFound()) : notFound());
  }

  /**
   * {@code POST /api/v1/provision}: the body is the MQTT provisioning request, answered 200 with
   * the same JSON the MQTT session publishes on {@code /provision/response} (its {@code status}
   * says whether the device was provisioned), by the node's one provisioning service and its
   * limits.
   */
  private Route provision() {
    return path(
        "provision",
        () ->
            answered(
                () ->
                    post(
                        () ->
                            extractRequest(
                                request -> {
                                  metrics.request(Resource.PROVISION);
                                  InetAddress source = sourceAddress(request);
                                  return withSizeLimit(
                                      config.maxBodyBytes(),
                                      () ->
                                          entity(
                                              Unmarshaller.entityToByteArray(),
                                              body ->
                                                  reply(
                                                      () ->
                                                          provisioning
                                                              .provision(body, source)
                                                              .thenApply(
                                                                  answer ->
                                                                      HttpResponse.create()
                                                                          .withStatus(200)
                                                                          .withEntity(
                                                                              ContentTypes
                                                                                  .APPLICATION_JSON,
                                                                              answer.toJson())))));
                                }))));
  }

  /** The API's resources under {@code /api/v1/}; a new resource is one more entry here. */
  private Route resources() {
    return pathPrefix(
        PathMatchers.segment(),
        token ->
            extractRequest(
                request -> {
                  Caller caller =
                      new Caller(
                          token, sourceAddress(request), ClientConnection.of(request).orElse(null));
                  return concat(
                      path(
                          "telemetry",
                          () -> answered(() -> post(() -> upload(caller, Resource.TELEMETRY)))),
                      path(
                          "attributes",
                          () ->
                              answered(
                                  () ->
                                      concat(
                                          post(() -> upload(caller, Resource.ATTRIBUTES)),
                                          get(
                                              () ->
                                                  parameterMap(params -> read(caller, params)))))),
                      path(
                          PathMatchers.segment("attributes").slash("updates"),
                          () -> answered(() -> poll(caller, LongPoll.Kind.ATTRIBUTES))),
                      path(
                          "rpc",
                          () ->
                              answered(
                                  () ->
                                      concat(
                                          poll(caller, LongPoll.Kind.RPC),
                                          post(() -> clientRpc(caller))))),
                      path(
                          PathMatchers.segment("rpc").slash(PathMatchers.segment()),
                          requestId -> answered(() -> post(() -> reply(caller, requestId)))),
                      path("firmware", () -> answered(() -> firmware(caller))));
                }));
  }

  // Answered here rather than left to the REST API, which would log the path and its token.
  private Route notFound() {
    return extractRequest(
        request -> {
          metrics.refused(
              Refusal.NOT_FOUND, "-", "no such resource of the device API (path not logged)");
          return complete(HttpErrors.error(404, "no such resource"));
        });
  }

  // The TCP peer (the listener sets the remote-address attribute); never X-Forwarded-For, which a
  // client chooses freely.
  private static @Nullable InetAddress sourceAddress(HttpRequest request) {
    return request
        .getAttribute(AttributeKeys.remoteAddress)
        .flatMap(RemoteAddress::getAddress)
        .orElse(null);
  }

  // Pekko's own refusals on a matched resource (wrong method, body too large, ...) as JSON.
  private Route answered(Supplier<Route> route) {
    return handleRejections(rejections, route);
  }

  private Route upload(Caller caller, Resource resource) {
    metrics.request(resource);
    Uploads.Kind kind =
        resource == Resource.TELEMETRY ? Uploads.Kind.TELEMETRY : Uploads.Kind.ATTRIBUTES;
    return withBody(
        caller,
        Unmarshaller.entityToByteArray(),
        (device, body) -> uploads.upload(device, kind, body));
  }

  private Route read(Caller caller, Map<String, String> params) {
    metrics.request(Resource.ATTRIBUTES_READ);
    return reply(() -> withDevice(caller, device -> readAttributes(device, params)));
  }

  private CompletionStage<HttpResponse> readAttributes(Device device, Map<String, String> params) {
    Duration wait = budgets.admit(device.id(), DeviceBudgets.Rated.ATTRIBUTE_READ);
    if (!wait.isZero()) {
      return rateLimited(device, "attribute reads", wait);
    }
    Set<String> client = keys(params.get("clientKeys"));
    Set<String> shared = keys(params.get("sharedKeys"));
    // ThingsBoard's rule: no keys at all asks for both scopes whole.
    boolean everything = client == null && shared == null;
    CompletionStage<List<AttributeKvEntry>> clientValues =
        everything || client != null
            ? queries.attributes(
                device.id(), AttributeScope.CLIENT_SCOPE, Optional.ofNullable(client))
            : NONE;
    CompletionStage<List<AttributeKvEntry>> sharedValues =
        everything || shared != null
            ? queries.attributes(
                device.id(), AttributeScope.SHARED_SCOPE, Optional.ofNullable(shared))
            : NONE;
    return clientValues.thenCombine(
        sharedValues, (c, s) -> DeviceJson.ok(DeviceJson.attributes(c, s)));
  }

  private Route poll(Caller caller, LongPoll.Kind kind) {
    return get(
        () ->
            parameterMap(
                params -> {
                  // The poll's wait counts from here, as Pekko's request timeout set below does.
                  long arrived = nanoClock.getAsLong();
                  metrics.request(
                      kind == LongPoll.Kind.RPC ? Resource.RPC_POLL : Resource.ATTRIBUTE_UPDATES);
                  Duration timeout;
                  try {
                    timeout =
                        config.pollTimeout(Long.parseLong(params.getOrDefault("timeout", "0")));
                  } catch (IllegalArgumentException e) {
                    metrics.refused(Refusal.BAD_REQUEST, "-", "bad timeout parameter");
                    return complete(
                        HttpErrors.error(
                            400, "timeout must be a non-negative number of milliseconds"));
                  }
                  // The request lives as long as the poll may wait, past the server's default
                  // request timeout; the poll ends (ANSWER_MARGIN) before it, whatever the token
                  // look-up took.
                  return withRequestTimeout(
                      timeout.plus(DeviceApiConfig.ANSWER_MARGIN),
                      () ->
                          reply(
                              () ->
                                  withDevice(
                                      caller,
                                      device ->
                                          polls.start(
                                              kind,
                                              device.id(),
                                              timeout,
                                              arrived,
                                              caller.address(),
                                              caller.connection()))));
                }));
  }

  private Route firmware(Caller caller) {
    return get(
        () ->
            parameterMap(
                params -> {
                  metrics.request(Resource.FIRMWARE);
                  return reply(
                      () -> withDevice(caller, device -> firmware.download(device, params)));
                }));
  }

  private Route clientRpc(Caller caller) {
    metrics.request(Resource.CLIENT_RPC);
    return withBody(caller, Unmarshaller.entityToByteArray(), this::answerClientRpc);
  }

  private CompletionStage<HttpResponse> answerClientRpc(Device device, byte[] body) {
    Duration wait = budgets.admit(device.id(), DeviceBudgets.Rated.CLIENT_RPC);
    if (!wait.isZero()) {
      return rateLimited(device, "client-side RPC requests", wait);
    }
    return CompletableFuture.completedFuture(DeviceJson.ok(clientRpc.answer(body)));
  }

  private Route reply(Caller caller, String requestId) {
    metrics.request(Resource.RPC_REPLY);
    return withBody(
        caller,
        Unmarshaller.entityToString(),
        (device, body) -> {
          int id;
          try {
            id = Integer.parseInt(requestId);
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the request id must be an integer");
          }
          if (!replies.reply(device.id(), id, body)) {
            metrics.unknownReply(device.id().toString(), requestId);
          }
          // Answered either way, as ThingsBoard does and as the MQTT path acknowledges an answer
          // to nothing.
          return CompletableFuture.completedFuture(HttpResponse.create().withStatus(200));
        });
  }

  /** The body, within the size limit (413 beyond), then {@code then} for the token's device. */
  private <T> Route withBody(
      Caller caller,
      Unmarshaller<? super HttpEntity, T> as,
      BiFunction<Device, T, CompletionStage<HttpResponse>> then) {
    return withSizeLimit(
        config.maxBodyBytes(),
        () ->
            entity(
                as, body -> reply(() -> withDevice(caller, device -> then.apply(device, body)))));
  }

  /**
   * {@code then} for the device whose access token is the caller's, or 401; 429 without a look-up
   * while the caller's address has no failed authentication left.
   */
  private CompletionStage<HttpResponse> withDevice(
      Caller caller, Function<Device, CompletionStage<HttpResponse>> then) {
    InetAddress address = caller.address();
    Duration wait = address == null ? Duration.ZERO : failedAuth.wait(address);
    if (!wait.isZero()) {
      String why = "too many unknown access tokens from this address";
      metrics.refused(Refusal.FAILED_AUTH_LIMIT, caller.who(), why);
      return CompletableFuture.completedFuture(tooMany(why, wait));
    }
    return registry
        .findByToken(caller.token())
        .thenCompose(
            found -> {
              if (found.isPresent()) {
                return then.apply(found.get());
              }
              if (address != null) {
                failedAuth.failed(address);
              }
              metrics.refused(Refusal.UNKNOWN_TOKEN, caller.who(), "unknown access token");
              return CompletableFuture.completedFuture(
                  HttpErrors.error(401, "invalid access token"));
            });
  }

  private CompletionStage<HttpResponse> rateLimited(Device device, String what, Duration wait) {
    String why = "too many " + what + " per second from this device";
    metrics.refused(Refusal.RATE_LIMITED, device.id().toString(), why);
    return CompletableFuture.completedFuture(tooMany(why, wait));
  }

  /** 429 with {@code Retry-After}: the wait in whole seconds, at least one. */
  static HttpResponse tooMany(String message, Duration wait) {
    long seconds = Math.max(1, (wait.toMillis() + 999) / 1000);
    return HttpErrors.error(429, message)
        .addHeader(RawHeader.create("Retry-After", Long.toString(seconds)));
  }

  /** Completes with the stage's answer; a failure of it answered by {@link #failure}. */
  private Route reply(Supplier<CompletionStage<HttpResponse>> response) {
    CompletionStage<HttpResponse> stage;
    try {
      stage = response.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return completeWithFuture(stage.exceptionally(error -> failure(error, metrics)));
  }

  /**
   * The answer to a failed stage: bad input 400; storage trouble 503 (uploads answer their own
   * failures in {@link Uploads}, so what fails here is a token look-up or an attribute read);
   * anything else 500. Each counted.
   */
  static HttpResponse failure(Throwable error, DeviceApiMetrics metrics) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof IllegalArgumentException) {
      String message = HttpErrors.clientMessage(cause, "malformed request");
      metrics.refused(Refusal.BAD_REQUEST, "-", message);
      return HttpErrors.error(400, message);
    }
    if (cause instanceof StoreException) {
      metrics.readFailed("-", String.valueOf(cause));
      return HttpErrors.error(503, "storage unavailable, try again later")
          .addHeader(RawHeader.create("Retry-After", "1"));
    }
    return HttpErrors.unexpectedError(cause);
  }

  // Comma-separated keys, trimmed, blanks dropped; null when none are named.
  private static @Nullable Set<String> keys(@Nullable String commaSeparated) {
    if (commaSeparated == null) {
      return null;
    }
    Set<String> keys = new LinkedHashSet<>();
    for (String key : commaSeparated.split(",")) {
      String trimmed = key.strip();
      if (!trimmed.isEmpty()) {
        keys.add(trimmed);
      }
    }
    return keys.isEmpty() ? null : keys;
  }

  /**
   * Answers every waiting long poll 503 and stops the timers: the server stops. RPC reports (sent,
   * delivered) still queued on the timer are dropped; a persistent request they concern stays
   * {@code QUEUED} and is redelivered, which is harmless.
   */
  @Override
  public void close() {
    polls.closeAll();
    timer.shutdownNow();
  }
}
