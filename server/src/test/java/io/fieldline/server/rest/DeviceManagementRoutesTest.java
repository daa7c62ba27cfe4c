package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.device.Device;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ThingsBoard's device management over real HTTP against an in-memory registry: update through
 * {@code POST /api/device} with an id, look-up by name, and the {@code PageData} listing with its
 * search, sorts and totals.
 */
class DeviceManagementRoutesTest extends RoutesTestBase {

  private final InMemoryDevices devices = new InMemoryDevices();

  @Override
  Route routes() {
    CredentialsRevocation none = id -> CompletableFuture.completedFuture(null);
    return new DeviceRoutes(devices, none).routes();
  }

  @Test
  void should_rename_relabel_and_keep_id_creation_time_and_token_when_the_body_has_an_id() {
    Device device = devices.add("upd-before", "sensor");

    HttpResponse<String> updated =
        post(
            "/api/device",
            "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                + device.id()
                + "\"},\"name\":\"upd-after\",\"type\":\"meter\",\"label\":\"Boiler room\","
                + "\"additionalInfo\":{\"description\":\"east wing\",\"gateway\":false}}");

    assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
    JsonNode body = json(updated);
    assertThat(body.at("/id/id").asText()).isEqualTo(device.id().toString());
    assertThat(body.get("createdTime").asLong()).isEqualTo(device.createdTime());
    assertThat(body.get("name").asText()).isEqualTo("upd-after");
    assertThat(body.get("type").asText()).isEqualTo("meter");
    assertThat(body.get("label").asText()).isEqualTo("Boiler room");
    assertThat(body.get("additionalInfo").toString())
        .isEqualTo("{\"description\":\"east wing\",\"gateway\":false}");
    Device stored = devices.get(device.id());
    assertThat(stored.accessToken()).isEqualTo(device.accessToken());
    assertThat(stored.additionalInfoJson())
        .isEqualTo("{\"description\":\"east wing\",\"gateway\":false}");
  }

  @Test
  void should_replace_label_and_additional_info_as_thingsboard_does_when_they_are_left_out() {
    Device device = devices.add("upd-replace", "sensor");
    post("/api/device", update(device.id(), "upd-replace", ",\"label\":\"L\""));

    JsonNode body = json(post("/api/device", update(device.id(), "upd-replace", "")));

    assertThat(body.get("label").isNull()).isTrue();
    assertThat(body.get("additionalInfo").isNull()).isTrue();
    assertThat(body.get("type").asText()).isEqualTo("default");
  }

  @Test
  void should_answer_404_when_the_id_is_unknown_and_409_when_the_name_is_taken() {
    Device taken = devices.add("upd-taken", "t");
    Device mine = devices.add("upd-mine", "t");

    assertNotFound(post("/api/device", update(DeviceId.random(), "upd-ghost", "")));
    assertError(post("/api/device", update(mine.id(), taken.name(), "")), 409, 31);
    assertThat(devices.get(mine.id()).name()).isEqualTo("upd-mine");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"id\":\"not-an-object\",\"name\":\"x\"}",
        "{\"id\":{\"entityType\":\"ASSET\",\"id\":\"%s\"},\"name\":\"x\"}",
        "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\"nope\"},\"name\":\"x\"}",
        "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\"%s\"}}",
        "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\"%s\"},\"name\":\"x\",\"label\":7}",
        "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\"%s\"},\"name\":\"x\",\"label\":\"a\\u0000b\"}",
        "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\"%s\"},\"name\":\"x\",\"additionalInfo\":[1]}",
        "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\"%s\"},\"name\":\"x\","
            + "\"additionalInfo\":{\"s\":\"\\ud800\"}}",
      })
  void should_answer_400_and_change_nothing_when_an_update_is_invalid(String template) {
    Device device = devices.add("upd-invalid-" + DeviceId.random(), "t");

    assertBadRequest(post("/api/device", template.formatted(device.id())));
    assertThat(devices.get(device.id())).isEqualTo(device);
  }

  @Test
  void should_create_with_label_and_additional_info_when_the_body_has_no_id() {
    JsonNode body =
        json(
            post(
                "/api/device?accessToken=create-label-token",
                "{\"id\":null,\"name\":\"created-with-label\",\"label\":\"Hall\","
                    + "\"additionalInfo\":{\"floor\":2}}"));

    assertThat(body.get("label").asText()).isEqualTo("Hall");
    assertThat(body.at("/additionalInfo/floor").asInt()).isEqualTo(2);
    Device stored = devices.get(DeviceId.parse(body.at("/id/id").asText()));
    assertThat(stored.accessToken()).isEqualTo("create-label-token");
  }

  @Test
  void should_find_a_device_by_name_or_answer_404() {
    Device device = devices.add("lookup-me", "t");

    JsonNode found = json(get("/api/tenant/devices?deviceName=lookup-me"));
    assertThat(found.at("/id/id").asText()).isEqualTo(device.id().toString());
    assertThat(found.get("name").asText()).isEqualTo("lookup-me");
    assertNotFound(get("/api/tenant/devices?deviceName=lookup-nobody"));
    assertBadRequest(get("/api/tenant/devices?deviceName=bad%0Aname"));
  }

  @Test
  void should_find_a_device_by_name_on_the_newer_clients_path_too() {
    Device device = devices.add("lookup-new", "t");

    JsonNode found = json(get("/api/tenant/device?deviceName=lookup-new"));
    assertThat(found.at("/id/id").asText()).isEqualTo(device.id().toString());
    assertNotFound(get("/api/tenant/device?deviceName=lookup-nobody"));
    assertBadRequest(get("/api/tenant/device"));
  }

  @Test
  void should_answer_the_devices_among_the_ids_in_the_order_asked_and_leave_unknown_ids_out() {
    Device first = devices.add("ids-first", "t");
    Device second = devices.add("ids-second", "t");
    String unknown = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

    JsonNode found =
        json(get("/api/devices?deviceIds=" + second.id() + "," + unknown + "," + first.id()));

    assertThat(found.isArray()).isTrue();
    assertThat(found).hasSize(2);
    assertThat(found.get(0).at("/id/id").asText()).isEqualTo(second.id().toString());
    assertThat(found.get(1).at("/id/id").asText()).isEqualTo(first.id().toString());
    assertThat(found.get(1).get("name").asText()).isEqualTo("ids-first");
  }

  @Test
  void should_refuse_device_ids_that_are_missing_not_uuids_or_too_many() {
    assertBadRequest(get("/api/devices"));
    assertBadRequest(get("/api/devices?deviceIds=not-a-uuid"));
    StringBuilder ids = new StringBuilder();
    for (int i = 0; i <= DeviceRoutes.MAX_IDS; i++) {
      ids.append(i == 0 ? "" : ",").append(UUID.randomUUID());
    }
    assertBadRequest(get("/api/devices?deviceIds=" + ids));
  }

  @Test
  void should_page_with_totals_search_and_each_sort() {
    // Created in this order, so createdTime sorts them c, a, b.
    devices.add("page-c", "t2");
    Device a = devices.add("page-a", "t3");
    devices.add("page-b", "t1");
    devices.update(
        new io.fieldline.common.device.DeviceUpdate(a.id(), "page-a", "t3", "label-z", null));
    devices.add("other", "t0");

    JsonNode first = json(get("/api/tenant/devices?pageSize=2&page=0&textSearch=PAGE-"));
    assertThat(first.get("data").findValuesAsText("name")).containsExactly("page-a", "page-b");
    assertThat(first.get("totalElements").asLong()).isEqualTo(3);
    assertThat(first.get("totalPages").asInt()).isEqualTo(2);
    assertThat(first.get("hasNext").asBoolean()).isTrue();
    JsonNode second = json(get("/api/tenant/devices?pageSize=2&page=1&textSearch=page-"));
    assertThat(second.get("data").findValuesAsText("name")).containsExactly("page-c");
    assertThat(second.get("hasNext").asBoolean()).isFalse();
    JsonNode beyond = json(get("/api/tenant/devices?pageSize=2&page=5&textSearch=page-"));
    assertThat(beyond.get("data")).isEmpty();

    assertThat(names("sortProperty=createdTime&sortOrder=ASC"))
        .containsExactly("page-c", "page-a", "page-b");
    assertThat(names("sortProperty=type&sortOrder=DESC"))
        .containsExactly("page-a", "page-c", "page-b");
    assertThat(names("sortProperty=label&sortOrder=DESC"))
        .containsExactly("page-a", "page-b", "page-c");
    assertThat(names("sortProperty=name&sortOrder=desc"))
        .containsExactly("page-c", "page-b", "page-a");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "page=0",
        "pageSize=abc",
        "pageSize=0",
        "pageSize=1001",
        "pageSize=10&page=-1",
        "pageSize=1000&page=2147484",
        "pageSize=10&sortProperty=customerTitle",
        "pageSize=10&sortOrder=UP",
        "pageSize=10&type=sensor",
        "pageSize=10&textSearch=a%01b",
      })
  void should_answer_400_when_a_listing_parameter_is_missing_or_invalid(String query) {
    assertBadRequest(get("/api/tenant/devices?" + query));
  }

  private List<String> names(String sort) {
    return json(get("/api/tenant/devices?pageSize=10&textSearch=page-&" + sort))
        .get("data")
        .findValuesAsText("name");
  }

  private static String update(DeviceId id, String name, String more) {
    return "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
        + id
        + "\"},\"name\":\""
        + name
        + "\""
        + more
        + "}";
  }
}
