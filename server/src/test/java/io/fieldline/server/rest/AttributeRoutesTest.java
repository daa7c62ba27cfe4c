package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.device.Device;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The attribute routes over real HTTP against in-memory ports whose writes each test completes,
 * fails or leaves pending, and a real {@link LocalDeviceEvents} with a recording listener: what is
 * stored, what is answered, and that the event follows the write.
 */
class AttributeRoutesTest extends RoutesTestBase {

  private static final long NOW = 1_700_000_000_000L;

  private final InMemoryDevices devices = new InMemoryDevices();
  private final InMemoryValues values = new InMemoryValues();
  private final LocalDeviceEvents localEvents = new LocalDeviceEvents();
  private final List<DeviceEvent> heard = new CopyOnWriteArrayList<>();
  private volatile DeviceEvents events = localEvents;
  private Device device;
  private String base;

  @Override
  Route routes() {
    DeviceEvents switchable = publishing(event -> events.publish(event));
    // Mounted as RestApi mounts them: the telemetry routes first.
    return Directives.concat(
        new TelemetryRoutes(
                values,
                values,
                devices,
                (id, limit) -> null,
                new RestConfig.QueryLimits(100, 100_000, 700, java.time.Duration.ofDays(366)))
            .routes("admin"),
        new AttributeRoutes(devices, values, values, switchable, 16, () -> NOW).routes("admin"));
  }

  @BeforeEach
  void freshDevice() {
    values.reset();
    heard.clear();
    events = localEvents;
    device = devices.add("dev-" + DeviceId.random(), "default");
    localEvents.subscribe(device.id(), event -> heard.add(event));
    base = "/api/plugins/telemetry/DEVICE/" + device.id();
  }

  @Test
  void should_store_typed_values_and_publish_them_when_shared_attributes_are_saved() {
    HttpResponse<String> saved =
        post(
            base + "/attributes/SHARED_SCOPE",
            "{\"n\":42,\"d\":21.5,\"b\":true,\"s\":\"1.10\",\"j\":{\"a\":[1,2]},\"skip\":null}");

    assertThat(saved.statusCode()).isEqualTo(200);
    assertThat(saved.body()).isEmpty();
    List<AttributeKvEntry> stored = stored(AttributeScope.SHARED_SCOPE);
    assertThat(stored.stream().map(AttributeKvEntry::kv))
        .containsExactlyInAnyOrder(
            KvEntry.of("n", 42L),
            KvEntry.of("d", 21.5),
            KvEntry.of("b", true),
            // No type cast: ThingsBoard's REST API keeps a numeric-looking string a string.
            KvEntry.of("s", "1.10"),
            KvEntry.json("j", "{\"a\":[1,2]}"));
    assertThat(stored).allSatisfy(entry -> assertThat(entry.lastUpdateTs()).isEqualTo(NOW));
    assertThat(heard)
        .singleElement()
        .isInstanceOfSatisfying(
            DeviceEvent.AttributesUpdated.class,
            event -> {
              assertThat(event.deviceId()).isEqualTo(device.id());
              assertThat(event.scope()).isEqualTo(AttributeScope.SHARED_SCOPE);
              assertThat(event.entries()).containsExactlyInAnyOrderElementsOf(stored);
            });
  }

  @Test
  void should_save_server_attributes_through_each_of_thingsboards_paths() {
    assertThat(post(base + "/attributes/SERVER_SCOPE", "{\"a\":1}").statusCode()).isEqualTo(200);
    assertThat(post(base + "/SERVER_SCOPE", "{\"b\":2}").statusCode()).isEqualTo(200);
    assertThat(
            post("/api/plugins/telemetry/" + device.id() + "/server_scope", "{\"c\":3}")
                .statusCode())
        .isEqualTo(200);

    assertThat(stored(AttributeScope.SERVER_SCOPE).stream().map(AttributeKvEntry::key))
        .containsExactly("a", "b", "c");
    assertThat(heard).hasSize(3);
  }

  @Test
  void should_answer_only_after_the_write_and_publish_only_then() throws Exception {
    CompletableFuture<Void> gate = new CompletableFuture<>();
    values.gate = gate;

    CompletableFuture<HttpResponse<String>> answer =
        postAsync(base + "/attributes/SHARED_SCOPE", "{\"t\":1}");

    // The route is waiting on the write; a route that answered anyway would be seen here.
    await().atMost(Duration.ofSeconds(10)).until(() -> gate.getNumberOfDependents() > 0);
    assertThat(answer).failsWithin(200, TimeUnit.MILLISECONDS);
    assertThat(heard).isEmpty();
    gate.complete(null);
    assertThat(answer.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(heard).hasSize(1);
  }

  @Test
  void should_answer_503_and_publish_nothing_when_the_write_fails() {
    values.failure = new StoreException(StoreException.Kind.TIMEOUT, "write timed out");

    assertError(post(base + "/attributes/SHARED_SCOPE", "{\"t\":1}"), 503, 2);
    assertError(delete(base + "/SHARED_SCOPE?keys=t"), 503, 2);
    assertThat(heard).isEmpty();
  }

  @Test
  void should_answer_200_when_the_change_is_stored_but_publishing_fails() {
    events =
        publishing(
            event -> {
              throw new IllegalStateException("event path broken");
            });
    assertThat(post(base + "/attributes/SHARED_SCOPE", "{\"t\":1}").statusCode()).isEqualTo(200);

    events =
        publishing(
            event -> CompletableFuture.failedFuture(new IllegalStateException("node unreachable")));
    assertThat(delete(base + "/SHARED_SCOPE?keys=t").statusCode()).isEqualTo(200);
    assertThat(stored(AttributeScope.SHARED_SCOPE)).isEmpty();
  }

  @Test
  void should_read_every_scope_with_typed_values_or_one_scope_or_some_keys() {
    values.writeAttributes(
        device.id(), AttributeScope.CLIENT_SCOPE, List.of(KvEntry.of("fw", "1.2")), 5);
    post(base + "/attributes/SHARED_SCOPE", "{\"on\":true,\"cfg\":{\"x\":1}}");
    post(base + "/attributes/SERVER_SCOPE", "{\"limit\":7.5}");

    JsonNode all = json(get(base + "/values/attributes"));
    assertThat(all.findValuesAsText("key")).containsExactlyInAnyOrder("fw", "on", "cfg", "limit");
    JsonNode shared = json(get(base + "/values/attributes/SHARED_SCOPE"));
    assertThat(shared.toString())
        .isEqualTo(
            "[{\"key\":\"cfg\",\"value\":{\"x\":1},\"lastUpdateTs\":"
                + NOW
                + "},{\"key\":\"on\",\"value\":true,\"lastUpdateTs\":"
                + NOW
                + "}]");
    JsonNode some = json(get(base + "/values/attributes?keys=fw,limit"));
    assertThat(some.findValuesAsText("key")).containsExactlyInAnyOrder("fw", "limit");
    assertThat(some.findValue("value").isTextual() || some.findValue("value").isNumber()).isTrue();
    JsonNode client = json(get(base + "/values/attributes/CLIENT_SCOPE"));
    assertThat(client.get(0).get("value").asText()).isEqualTo("1.2");
    assertThat(client.get(0).get("lastUpdateTs").asLong()).isEqualTo(5);
  }

  @Test
  void should_list_the_keys_of_every_scope_or_of_one() {
    post(base + "/attributes/SHARED_SCOPE", "{\"b\":1,\"a\":2}");
    post(base + "/attributes/SERVER_SCOPE", "{\"c\":3,\"a\":4}");

    assertThat(json(get(base + "/keys/attributes")).toString()).isEqualTo("[\"a\",\"b\",\"c\"]");
    assertThat(json(get(base + "/keys/attributes/SERVER_SCOPE")).toString())
        .isEqualTo("[\"a\",\"c\"]");
    assertThat(json(get(base + "/keys/attributes/CLIENT_SCOPE")).toString()).isEqualTo("[]");
  }

  @Test
  void should_delete_keys_of_one_scope_and_publish_the_deletion() {
    post(base + "/attributes/SHARED_SCOPE", "{\"a\":1,\"b\":2,\"c\":3}");
    post(base + "/attributes/SERVER_SCOPE", "{\"a\":1}");
    heard.clear();

    HttpResponse<String> deleted = delete(base + "/SHARED_SCOPE?keys=a,b,missing");

    assertThat(deleted.statusCode()).isEqualTo(200);
    assertThat(stored(AttributeScope.SHARED_SCOPE).stream().map(AttributeKvEntry::key))
        .containsExactly("c");
    assertThat(stored(AttributeScope.SERVER_SCOPE)).hasSize(1);
    assertThat(heard)
        .containsExactly(
            new DeviceEvent.AttributesDeleted(
                device.id(), AttributeScope.SHARED_SCOPE, List.of("a", "b", "missing")));
    assertThat(
            delete("/api/plugins/telemetry/" + device.id() + "/SERVER_SCOPE?keys=a").statusCode())
        .isEqualTo(200);
    assertThat(stored(AttributeScope.SERVER_SCOPE)).isEmpty();
  }

  @Test
  void should_answer_400_when_a_device_writes_client_attributes_through_rest() {
    assertBadRequest(post(base + "/attributes/CLIENT_SCOPE", "{\"t\":1}"));
    assertBadRequest(post(base + "/CLIENT_SCOPE", "{\"t\":1}"));
    assertThat(stored(AttributeScope.CLIENT_SCOPE)).isEmpty();
    assertThat(heard).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "not json",
        "[1,2]",
        "\"text\"",
        "{}",
        "{\"only\":null}",
        "{\"a\":1} {\"b\":2}",
        "{\"\":1}",
        "{\"bad\\u0001key\":1}",
        "{\"s\":\"seventeen chars!!\"}",
        "{\"s\":\"\\ud800\"}",
      })
  void should_answer_400_and_store_nothing_when_a_save_body_is_not_a_storable_object(String body) {
    assertBadRequest(post(base + "/attributes/SHARED_SCOPE", body));
    assertThat(stored(AttributeScope.SHARED_SCOPE)).isEmpty();
    assertThat(heard).isEmpty();
  }

  @Test
  void should_answer_400_when_a_save_has_more_than_1000_attributes() {
    String body =
        IntStream.range(0, 1001)
            .mapToObj(i -> "\"k" + i + "\":" + i)
            .collect(Collectors.joining(",", "{", "}"));
    assertBadRequest(post(base + "/attributes/SERVER_SCOPE", body));
    String limit =
        IntStream.range(0, 1000)
            .mapToObj(i -> "\"k" + i + "\":" + i)
            .collect(Collectors.joining(",", "{", "}"));
    assertThat(post(base + "/attributes/SERVER_SCOPE", limit).statusCode()).isEqualTo(200);
  }

  @Test
  void should_answer_400_when_a_scope_or_key_list_is_invalid() {
    assertBadRequest(post(base + "/attributes/OTHER_SCOPE", "{\"t\":1}"));
    assertBadRequest(get(base + "/values/attributes/OTHER_SCOPE"));
    assertBadRequest(get(base + "/keys/attributes/OTHER_SCOPE"));
    assertBadRequest(delete(base + "/OTHER_SCOPE?keys=a"));
    assertBadRequest(delete(base + "/SHARED_SCOPE"));
    assertBadRequest(delete(base + "/SHARED_SCOPE?keys=,,"));
    assertBadRequest(get(base + "/values/attributes?keys=a%0Ab"));
  }

  @Test
  void should_answer_404_for_every_call_about_an_unknown_device() {
    String unknown = "/api/plugins/telemetry/DEVICE/" + DeviceId.random();
    assertNotFound(post(unknown + "/attributes/SHARED_SCOPE", "{\"t\":1}"));
    assertNotFound(get(unknown + "/values/attributes"));
    assertNotFound(get(unknown + "/keys/attributes/SHARED_SCOPE"));
    assertNotFound(delete(unknown + "/SHARED_SCOPE?keys=t"));
    assertThat(heard).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"ASSET", "CUSTOMER", "device", "TENANT"})
  void should_answer_400_for_entity_types_other_than_device(String type) {
    String other = "/api/plugins/telemetry/" + type + "/" + device.id();
    assertBadRequest(post(other + "/attributes/SERVER_SCOPE", "{\"t\":1}"));
    assertBadRequest(get(other + "/values/attributes"));
    assertBadRequest(delete(other + "/SERVER_SCOPE?keys=t"));
  }

  @Test
  void should_answer_400_when_the_device_id_is_not_a_uuid() {
    assertBadRequest(get("/api/plugins/telemetry/DEVICE/not-a-uuid/values/attributes"));
    assertBadRequest(post("/api/plugins/telemetry/DEVICE/1-1-1-1-1/SHARED_SCOPE", "{\"t\":1}"));
  }

  /** A {@link DeviceEvents} that publishes with {@code publish}; nothing subscribes to it. */
  private static DeviceEvents publishing(Function<DeviceEvent, CompletionStage<Integer>> publish) {
    return new DeviceEvents() {
      @Override
      public CompletionStage<Integer> publish(DeviceEvent event) {
        return publish.apply(event);
      }

      @Override
      public Subscription subscribe(DeviceId id, DeviceEventListener listener) {
        throw new UnsupportedOperationException("subscribe");
      }
    };
  }

  private List<AttributeKvEntry> stored(AttributeScope scope) {
    return values
        .attributes(device.id(), scope, Optional.<Set<String>>empty())
        .toCompletableFuture()
        .join();
  }
}
