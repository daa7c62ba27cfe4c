package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.CredentialsRevocation;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceConflictException;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.StringUnmarshallers;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;

/**
 * Device provisioning, ThingsBoard-shaped: {@code POST /api/device[?accessToken=]}, {@code
 * GET|DELETE /api/device/{id}}, {@code GET /api/tenant/devices?pageSize=&page=}, and Fieldline's
 * bulk call for load tests {@code POST /api/fieldline/devices/bulk}. Credentials are {@link
 * CredentialsRoutes}'. A delete answers once its credential is revoked on every node that could be
 * told ({@link CredentialsRevocation}), whatever its outcome (a failed one may have been applied).
 */
final class DeviceRoutes extends AllDirectives {

  /** Largest page and bulk size accepted. */
  static final int MAX_PAGE = 1000;

  static final int MAX_BULK = 50_000;

  /** Most devices a listing may walk past to reach its page. */
  static final int MAX_WALK = 100_000;

  private static final int BULK_PARALLELISM = 32;

  private final DeviceRegistry registry;
  private final CredentialsRevocation revocation;

  DeviceRoutes(DeviceRegistry registry, CredentialsRevocation revocation) {
    this.registry = registry;
    this.revocation = revocation;
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return concat(
        path(
            PathMatchers.segment("device"),
            () ->
                post(
                    () ->
                        parameterOptional(
                            "accessToken",
                            token ->
                                entity(
                                    Unmarshaller.entityToString(),
                                    body -> reply(() -> create(body, token)))))),
        pathPrefix(
            PathMatchers.segment("device").slash(PathMatchers.uuidSegment()),
            uuid -> {
              DeviceId id = new DeviceId(uuid);
              return pathEnd(
                  () ->
                      concat(
                          get(() -> reply(viewOf(id, JsonViews::device))),
                          delete(() -> reply(delete(id)))));
            }),
        path(
            PathMatchers.segment("tenant").slash("devices"),
            () ->
                get(
                    () ->
                        parameter(
                            StringUnmarshallers.INTEGER,
                            "pageSize",
                            pageSize ->
                                parameterOptional(
                                    StringUnmarshallers.INTEGER,
                                    "page",
                                    page -> reply(page(pageSize, page.orElse(0))))))),
        path(
            PathMatchers.segment("fieldline").slash("devices").slash("bulk"),
            () ->
                post(
                    () -> entity(Unmarshaller.entityToString(), body -> reply(() -> bulk(body))))));
  }

  private CompletionStage<HttpResponse> delete(DeviceId id) {
    return revocation
        .revokeAfter(id, registry.delete(id))
        .thenApply(
            deleted ->
                deleted
                    ? HttpJson.ok(JsonViews.MAPPER.createObjectNode())
                    : HttpJson.notFound("device"));
  }

  /** 200 with {@code view} of the device, or 404 when there is no such device. */
  private CompletionStage<HttpResponse> viewOf(DeviceId id, Function<Device, JsonNode> view) {
    return registry
        .findById(id)
        .thenApply(
            found ->
                found
                    .map(device -> HttpJson.ok(view.apply(device)))
                    .orElseGet(() -> HttpJson.notFound("device")));
  }

  private Route reply(CompletionStage<HttpResponse> response) {
    return completeWithFuture(response.exceptionally(HttpJson::failure));
  }

  private Route reply(java.util.function.Supplier<CompletionStage<HttpResponse>> response) {
    CompletionStage<HttpResponse> stage;
    try {
      stage = response.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return reply(stage);
  }

  private CompletionStage<HttpResponse> create(String body, Optional<String> accessToken) {
    JsonNode json = HttpJson.parseObject(body);
    String name = RequestParams.name("device name", json.path("name").asText("").trim());
    String type = json.path("type").asText("default");
    type = type.isBlank() ? "default" : RequestParams.name("type", type);
    Optional<String> token =
        accessToken.filter(t -> !t.isBlank()).map(t -> RequestParams.name("accessToken", t));
    return registry
        .create(name, type, token)
        .thenApply(device -> HttpJson.ok(JsonViews.device(device)));
  }

  // ThingsBoard pages by number; the registry pages by name. Page N is reached by walking N pages,
  // which is fine for an admin listing and documented in docs/rest-api.md.
  private CompletionStage<HttpResponse> page(int pageSize, int page) {
    if (pageSize < 1 || pageSize > MAX_PAGE || page < 0 || (long) page * pageSize > MAX_WALK) {
      return CompletableFuture.completedFuture(
          HttpJson.error(
              400,
              "pageSize must be 1.."
                  + MAX_PAGE
                  + ", page >= 0 and page * pageSize <= "
                  + MAX_WALK));
    }
    return walk(pageSize, page, Optional.empty());
  }

  private CompletionStage<HttpResponse> walk(int pageSize, int remaining, Optional<String> after) {
    return registry
        .list(pageSize + 1, after)
        .thenCompose(
            devices -> {
              boolean hasNext = devices.size() > pageSize;
              List<Device> pageDevices = devices.subList(0, Math.min(pageSize, devices.size()));
              if (remaining == 0 || !hasNext) {
                return CompletableFuture.completedFuture(
                    remaining == 0
                        ? HttpJson.ok(JsonViews.page(pageDevices, hasNext))
                        : HttpJson.ok(JsonViews.page(List.of(), false)));
              }
              return walk(
                  pageSize, remaining - 1, Optional.of(pageDevices.get(pageSize - 1).name()));
            });
  }

  /**
   * Creates {@code count} devices named {@code namePrefix + i} whose access token is the same as
   * the name unless {@code tokenPrefix} is given. Re-running it returns the existing devices
   * instead of duplicating them, so load-test provisioning is repeatable.
   */
  private CompletionStage<HttpResponse> bulk(String body) {
    JsonNode json = HttpJson.parseObject(body);
    JsonNode countNode = json.path("count");
    if (!countNode.isInt() || countNode.asInt() < 1 || countNode.asInt() > MAX_BULK) {
      throw new IllegalArgumentException("count must be an integer in 1.." + MAX_BULK);
    }
    int count = countNode.asInt();
    // Room for the largest index after each prefix, so every name and token fits.
    int room = RequestParams.MAX_NAME_LENGTH - Integer.toString(count - 1).length();
    String prefix = RequestParams.prefix("namePrefix", json.path("namePrefix").asText(""), room);
    String tokenPrefix =
        RequestParams.prefix("tokenPrefix", json.path("tokenPrefix").asText(prefix), room);
    String type = RequestParams.name("type", json.path("type").asText("default"));
    List<CompletableFuture<Device>> results = new ArrayList<>(count);
    // BULK_PARALLELISM sequential chains: bounded concurrency without blocking a thread.
    List<CompletableFuture<Void>> chains = new ArrayList<>();
    for (int lane = 0; lane < Math.min(BULK_PARALLELISM, count); lane++) {
      chains.add(CompletableFuture.completedFuture(null));
    }
    for (int i = 0; i < count; i++) {
      int index = i;
      CompletableFuture<Device> result = new CompletableFuture<>();
      results.add(result);
      int lane = i % chains.size();
      chains.set(
          lane,
          chains
              .get(lane)
              .thenCompose(
                  ignored ->
                      createOrGetSafely(prefix + index, tokenPrefix + index, type)
                          .handle(
                              (device, error) -> {
                                if (error != null) {
                                  result.completeExceptionally(error);
                                } else {
                                  result.complete(device);
                                }
                                return null;
                              })));
    }
    return CompletableFuture.allOf(results.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            done -> {
              ArrayNode array = JsonViews.MAPPER.createArrayNode();
              for (CompletableFuture<Device> result : results) {
                Device device = result.join();
                ObjectNode node = array.addObject();
                node.put("name", device.name());
                node.put("id", device.id().toString());
                node.put("accessToken", device.accessToken());
              }
              return HttpJson.ok(array);
            });
  }

  // A synchronous throw would end the lane without completing its results: the request would hang.
  private CompletionStage<Device> createOrGetSafely(String name, String token, String type) {
    try {
      return createOrGet(name, token, type);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private CompletionStage<Device> createOrGet(String name, String token, String type) {
    return registry
        .create(name, type, Optional.of(token))
        .handle(
            (device, error) -> {
              if (error == null) {
                return CompletableFuture.completedFuture(device);
              }
              Throwable cause = error instanceof CompletionException ? error.getCause() : error;
              if (cause instanceof DeviceConflictException) {
                return registry
                    .findByToken(token)
                    .thenApply(
                        found ->
                            found
                                .filter(existing -> existing.name().equals(name))
                                .orElseThrow(
                                    () ->
                                        new DeviceConflictException(
                                            "device "
                                                + name
                                                + " or token "
                                                + token
                                                + " belongs to another device")));
              }
              return CompletableFuture.<Device>failedFuture(cause);
            })
        .thenCompose(Function.identity());
  }
}
