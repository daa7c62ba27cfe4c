package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.fleet.rpc.RpcOutcome;
import io.fieldline.fleet.rpc.RpcService;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;

/**
 * Server-side RPC, ThingsBoard's REST shapes:
 *
 * <ul>
 *   <li>{@code POST /api/rpc/{oneway|twoway}/{deviceId}} and the legacy {@code POST
 *       /api/plugins/rpc/{oneway|twoway}/{deviceId}}: a lightweight call answers when it ends — 200
 *       (one-way: empty, once delivered; two-way: the device's answer), or at its deadline 504
 *       ({@code /api/rpc}) or 408 (legacy), as ThingsBoard's two controllers do; a persistent one
 *       answers {@code {"rpcId": …}} once stored;
 *   <li>{@code GET /api/rpc/persistent/{rpcId}}, {@code GET
 *       /api/rpc/persistent/device/{deviceId}?pageSize=&page=&rpcStatus=} (PageData, newest first)
 *       and {@code DELETE /api/rpc/persistent/{rpcId}}.
 * </ul>
 *
 * An unknown device answers 404, a malformed request 400, too many waiting calls (or, for a
 * persistent request, too many open for the device: {@code max-persistent-per-device}) 429.
 */
final class RpcRoutes extends AllDirectives {

  private static final int TIMEOUT_V2 = 504;
  private static final int TIMEOUT_LEGACY = 408;

  /** Room after a call's deadline for its answer to be written before Pekko's own timeout. */
  private static final Duration ANSWER_MARGIN = Duration.ofSeconds(5);

  private final RpcService rpc;
  private final DeviceRegistry registry;

  RpcRoutes(RpcService rpc, DeviceRegistry registry) {
    this.rpc = rpc;
    this.registry = registry;
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return concat(
        pathPrefix("rpc", () -> concat(calls(TIMEOUT_V2), persistent())),
        pathPrefix(PathMatchers.segment("plugins").slash("rpc"), () -> calls(TIMEOUT_LEGACY)));
  }

  private Route calls(int timeoutStatus) {
    return concat(
        path(
            PathMatchers.segment("oneway").slash(PathMatchers.uuidSegment()),
            uuid -> post(() -> call(new DeviceId(uuid), true, timeoutStatus))),
        path(
            PathMatchers.segment("twoway").slash(PathMatchers.uuidSegment()),
            uuid -> post(() -> call(new DeviceId(uuid), false, timeoutStatus))));
  }

  private Route call(DeviceId device, boolean oneway, int timeoutStatus) {
    return entity(
        Unmarshaller.entityToString(),
        body -> {
          long now = rpc.now();
          ToDeviceRpc request;
          try {
            request = RpcJson.request(body, device, oneway, rpc.config(), now);
          } catch (IllegalArgumentException e) {
            return HttpJson.reply(() -> CompletableFuture.failedFuture(e));
          }
          // The HTTP request lives as long as the call may wait, past the server's default.
          Duration wait =
              Duration.ofMillis(request.persistent() ? 0 : request.expirationTime() - now)
                  .plus(ANSWER_MARGIN);
          return withRequestTimeout(
              wait,
              () ->
                  HttpJson.reply(
                      () ->
                          HttpJson.withDevice(
                              registry, device, found -> start(request, timeoutStatus))));
        });
  }

  private CompletionStage<HttpResponse> start(ToDeviceRpc request, int timeoutStatus) {
    if (request.persistent()) {
      return rpc.submit(request)
          .thenApply(
              id -> {
                ObjectNode answer = JsonViews.MAPPER.createObjectNode();
                answer.put("rpcId", id.toString());
                return HttpJson.ok(answer);
              });
    }
    return rpc.call(request).thenApply(outcome -> answer(outcome, timeoutStatus));
  }

  private static HttpResponse answer(RpcOutcome outcome, int timeoutStatus) {
    if (outcome instanceof RpcOutcome.Responded responded) {
      return HttpResponse.create()
          .withStatus(200)
          .withEntity(ContentTypes.APPLICATION_JSON, RpcJson.answer(responded.body()).toString());
    }
    if (outcome instanceof RpcOutcome.Delivered) {
      return HttpResponse.create().withStatus(200);
    }
    if (outcome instanceof RpcOutcome.TimedOut) {
      return HttpJson.error(timeoutStatus, "timeout waiting for the device");
    }
    return HttpJson.error(503, "the server is shutting down");
  }

  private Route persistent() {
    return pathPrefix(
        "persistent",
        () ->
            concat(
                path(
                    PathMatchers.segment("device").slash(PathMatchers.uuidSegment()),
                    uuid ->
                        get(
                            () ->
                                parameterMap(
                                    params ->
                                        HttpJson.reply(() -> list(new DeviceId(uuid), params))))),
                path(
                    PathMatchers.uuidSegment(),
                    uuid ->
                        concat(
                            get(() -> HttpJson.reply(() -> find(uuid))),
                            delete(
                                () ->
                                    HttpJson.reply(
                                        () ->
                                            rpc.delete(uuid)
                                                .thenApply(
                                                    deleted ->
                                                        deleted
                                                            ? HttpJson.ok(
                                                                JsonViews.MAPPER.createObjectNode())
                                                            : HttpJson.notFound("rpc"))))))));
  }

  private CompletionStage<HttpResponse> find(UUID id) {
    return rpc.find(id)
        .thenApply(
            found ->
                found
                    .map(stored -> HttpJson.ok(RpcJson.stored(stored)))
                    .orElseGet(() -> HttpJson.notFound("rpc")));
  }

  private CompletionStage<HttpResponse> list(DeviceId device, Map<String, String> params) {
    int pageSize =
        (int) RequestParams.longIn(params, "pageSize", null, 1, RequestParams.MAX_PAGE_SIZE);
    int page = (int) RequestParams.longIn(params, "page", 0L, 0, Integer.MAX_VALUE / pageSize);
    Optional<RpcStatus> status = RequestParams.oneOf(params, "rpcStatus", RpcStatus.class);
    return rpc.list(device, status, pageSize, page)
        .thenApply(
            found -> {
              ObjectNode node = JsonViews.MAPPER.createObjectNode();
              ArrayNode data = node.putArray("data");
              found.data().forEach(stored -> data.add(RpcJson.stored(stored)));
              node.put("totalPages", found.totalPages());
              node.put("totalElements", found.totalElements());
              node.put("hasNext", found.hasNext());
              return HttpJson.ok(node);
            });
  }
}
