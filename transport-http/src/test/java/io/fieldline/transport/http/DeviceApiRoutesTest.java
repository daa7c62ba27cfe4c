package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.provision.ProvisionResponse;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.payload.PayloadParser;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link DeviceApi#routes()} on a real Pekko HTTP listener (127.0.0.1, port 0), in front of a
 * stand-in for the REST API that counts the requests reaching it, with a device registry in a map
 * whose look-ups the test counts and can hold back, and a nano clock the test moves.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeviceApiRoutesTest {

  private static final String TOKEN = "s3cr3t-token";

  private final HttpClient http = HttpClient.newHttpClient();
  // Fresh for each test.
  private SimpleMeterRegistry meters;
  private LocalDeviceEvents events;
  private Tokens registry;
  private AtomicInteger restReached;
  private AtomicLong nanos;
  private List<DeviceEvent> published;
  private List<String> provisionRequests;
  private ActorSystem<Void> system;
  private DeviceApi api;
  private ServerBinding binding;

  @BeforeAll
  void startSystem() {
    system = ActorSystem.create(Behaviors.empty(), "DeviceApiRoutesTest");
  }

  @BeforeEach
  void freshState() {
    meters = new SimpleMeterRegistry();
    events = new LocalDeviceEvents();
    registry = new Tokens();
    restReached = new AtomicInteger();
    nanos = new AtomicLong(System.nanoTime());
    published = new CopyOnWriteArrayList<>();
    provisionRequests = new CopyOnWriteArrayList<>();
    events.subscribeAll(
        event -> {
          published.add(event);
          return false;
        });
  }

  @AfterAll
  void stopSystem() {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().join();
  }

  @AfterEach
  void unbind() {
    if (binding != null) {
      binding.unbind().toCompletableFuture().join();
      binding = null;
    }
    if (api != null) {
      api.close();
      api = null;
    }
  }

  private void serve(String hocon) {
    DeviceApiConfig config =
        DeviceApiConfig.from(
            ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve());
    api =
        new DeviceApi(
            config,
            registry,
            new NoAttributes(),
            letter -> CompletableFuture.completedFuture(null),
            message -> CompletableFuture.completedFuture(Ack.stored()),
            events,
            PayloadParser.defaults(),
            meters,
            FirmwareDelivery.none(),
            (payload, source) -> {
              provisionRequests.add(new String(payload, StandardCharsets.UTF_8));
              return CompletableFuture.completedFuture(ProvisionResponse.notFound());
            },
            nanos::get);
    ServerSettings settings =
        ServerSettings.create(system.classicSystem()).withRemoteAddressAttribute(true);
    binding =
        Http.get(system)
            .newServerAt("127.0.0.1", 0)
            .withSettings(settings)
            .bind(
                Directives.concat(
                    api.routes(),
                    // The REST API behind it would answer 401 and log the path.
                    Directives.extractRequest(
                        request -> {
                          restReached.incrementAndGet();
                          return Directives.complete(StatusCodes.UNAUTHORIZED);
                        })))
            .toCompletableFuture()
            .join();
  }

  private HttpResponse<String> send(String method, String path, String body) {
    return join(sendAsync(method, path, body));
  }

  private CompletableFuture<HttpResponse<String>> sendAsync(
      String method, String path, String body) {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> join(CompletableFuture<HttpResponse<String>> response) {
    try {
      return response.get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private double rejected(String reason) {
    return meters.get(DeviceApiMetrics.REJECTED).tag("reason", reason).counter().count();
  }

  @Test
  void should_answer_404_itself_when_a_path_under_api_v1_is_no_resource_of_the_device_api() {
    serve("");
    Device device = registry.add(TOKEN);

    HttpResponse<String> claim = send("POST", "/api/v1/" + TOKEN + "/claim", "{}");
    HttpResponse<String> slash = send("POST", "/api/v1/" + TOKEN + "/telemetry/", "{\"t\":1}");
    HttpResponse<String> bare = send("GET", "/api/v1/" + TOKEN, null);
    HttpResponse<String> deeper = send("GET", "/api/v1/" + TOKEN + "/rpc/1/x", null);

    assertThat(List.of(claim, slash, bare, deeper))
        .allSatisfy(
            response -> {
              assertThat(response.statusCode()).isEqualTo(404);
              assertThat(response.body()).contains("\"status\":404").doesNotContain(TOKEN);
            });
    assertThat(restReached).hasValue(0);
    assertThat(rejected("not_found")).isEqualTo(4);
    // The API itself still answers, and a path outside /api/v1 still goes on to the REST API.
    assertThat(send("POST", "/api/v1/" + TOKEN + "/telemetry", "{\"t\":1}").statusCode())
        .isEqualTo(200);
    assertThat(send("GET", "/api/tenant/devices", null).statusCode()).isEqualTo(401);
    assertThat(restReached).hasValue(1);
    assertThat(device).isNotNull();
  }

  @Test
  void should_answer_404_to_every_device_path_when_the_api_is_disabled() {
    serve("fieldline.http-device.enabled = false");
    registry.add(TOKEN);

    HttpResponse<String> telemetry = send("POST", "/api/v1/" + TOKEN + "/telemetry", "{\"t\":1}");
    HttpResponse<String> firmware = send("GET", "/api/v1/" + TOKEN + "/firmware", null);

    assertThat(telemetry.statusCode()).isEqualTo(404);
    assertThat(firmware.statusCode()).isEqualTo(404);
    assertThat(restReached).hasValue(0);
    assertThat(registry.lookups).hasValue(0);
  }

  @Test
  void should_answer_429_without_a_lookup_when_an_address_spent_its_failed_authentications() {
    serve(
        "fieldline.http-device.failed-auth-burst = 3\n"
            + "fieldline.http-device.failed-auth-refill = 1 hour");
    Device device = registry.add(TOKEN);

    for (int i = 0; i < 3; i++) {
      assertThat(send("POST", "/api/v1/guess-" + i + "/telemetry", "{\"t\":1}").statusCode())
          .isEqualTo(401);
    }
    HttpResponse<String> guess = send("POST", "/api/v1/guess-3/telemetry", "{\"t\":1}");
    HttpResponse<String> known = send("POST", "/api/v1/" + TOKEN + "/telemetry", "{\"t\":1}");

    assertThat(guess.statusCode()).isEqualTo(429);
    assertThat(guess.headers().firstValue("Retry-After")).isPresent();
    // Every request from the address waits: its token cannot be told from a guess unlooked.
    assertThat(known.statusCode()).isEqualTo(429);
    assertThat(registry.lookups).hasValue(3);
    assertThat(rejected("unknown_token")).isEqualTo(3);
    assertThat(rejected("failed_auth_limit")).isEqualTo(2);
    assertThat(device).isNotNull();
  }

  @Test
  void should_answer_429_to_firmware_downloads_when_an_address_spent_its_failed_authentications() {
    serve(
        "fieldline.http-device.failed-auth-burst = 3\n"
            + "fieldline.http-device.failed-auth-refill = 1 hour");

    for (int i = 0; i < 3; i++) {
      assertThat(
              send("GET", "/api/v1/guess-" + i + "/firmware?title=t&version=v", null).statusCode())
          .isEqualTo(401);
    }
    HttpResponse<String> guess = send("GET", "/api/v1/guess-3/firmware?title=t&version=v", null);

    assertThat(guess.statusCode()).isEqualTo(429);
    assertThat(registry.lookups).hasValue(3);
  }

  @Test
  void should_serve_a_device_whose_token_is_provision_beside_the_provisioning_route() {
    serve("");
    registry.add("provision");

    HttpResponse<String> upload = send("POST", "/api/v1/provision/telemetry", "{\"t\":1}");
    HttpResponse<String> provision =
        send("POST", "/api/v1/provision", "{\"provisionDeviceKey\":\"k\"}");

    assertThat(upload.statusCode()).isEqualTo(200);
    assertThat(provision.statusCode()).isEqualTo(200);
    assertThat(provision.body()).contains("\"status\":\"NOT_FOUND\"");
    assertThat(provisionRequests).containsExactly("{\"provisionDeviceKey\":\"k\"}");
  }

  @Test
  void should_answer_413_without_provisioning_when_the_request_is_over_the_body_limit() {
    serve("fieldline.mqtt.max-packet-size = 1 KiB");

    HttpResponse<String> response =
        send("POST", "/api/v1/provision", "{\"deviceName\":\"" + "x".repeat(2048) + "\"}");

    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(provisionRequests).isEmpty();
  }

  @Test
  void should_end_the_poll_within_its_timeout_counted_from_arrival_when_the_lookup_was_slow() {
    serve("");
    Device device = registry.add(TOKEN);
    CompletableFuture<Optional<Device>> lookup = registry.holdNext();

    CompletableFuture<HttpResponse<String>> poll =
        sendAsync("GET", "/api/v1/" + TOKEN + "/rpc?timeout=5000", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> registry.lookups.get() == 1);
    // The look-up took the whole wait: the poll must not start listening any more.
    nanos.addAndGet(Duration.ofMillis(5001).toNanos());
    lookup.complete(Optional.of(device));

    HttpResponse<String> answer = join(poll);
    int takers =
        events.deliver(new DeviceEvent.RpcRequested(device.id(), rpc(device.id()), new Ignored()));

    assertThat(answer.statusCode()).isEqualTo(408);
    assertThat(takers).isZero();
    assertThat(published).noneMatch(DeviceEvent.RpcSubscribed.class::isInstance);
  }

  private static ToDeviceRpc rpc(DeviceId device) {
    return new ToDeviceRpc(
        UUID.randomUUID(),
        device,
        "m",
        "{}",
        false,
        false,
        5_000,
        System.currentTimeMillis() + 5_000,
        0,
        null);
  }

  /** A callback nobody listens to. */
  private static final class Ignored implements RpcCallback {
    @Override
    public void sent() {}

    @Override
    public void delivered() {}

    @Override
    public void responded(String body) {}

    @Override
    public void undelivered(String reason) {}
  }

  /** Devices by token, each look-up counted; the next one can be held back. */
  private static final class Tokens implements DeviceRegistry {
    final Map<String, Device> byToken = new ConcurrentHashMap<>();
    final AtomicInteger lookups = new AtomicInteger();
    private volatile CompletableFuture<Optional<Device>> held;

    Device add(String token) {
      Device device = new Device(new DeviceId(UUID.randomUUID()), "d-" + token, "test", token, 0L);
      byToken.put(token, device);
      return device;
    }

    CompletableFuture<Optional<Device>> holdNext() {
      held = new CompletableFuture<>();
      return held;
    }

    @Override
    public CompletionStage<Optional<Device>> findByToken(String token) {
      lookups.incrementAndGet();
      CompletableFuture<Optional<Device>> next = held;
      if (next != null) {
        held = null;
        return next;
      }
      return CompletableFuture.completedFuture(Optional.ofNullable(byToken.get(token)));
    }

    @Override
    public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<Device>> findById(DeviceId id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Device> create(String name, String type, Optional<String> token) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Boolean> delete(DeviceId id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<Device>> findByName(String name) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
      throw new UnsupportedOperationException();
    }
  }

  /** A device without attributes. */
  private static final class NoAttributes implements TelemetryQueries {
    @Override
    public CompletionStage<List<String>> keys(DeviceId deviceId) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<List<TsKvEntry>> latest(DeviceId deviceId, Optional<Set<String>> keys) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Map<String, List<TsKvEntry>>> history(
        DeviceId deviceId, HistoryQuery query) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<List<AttributeKvEntry>> attributes(
        DeviceId deviceId, AttributeScope scope, Optional<Set<String>> keys) {
      return CompletableFuture.completedFuture(List.of());
    }
  }
}
