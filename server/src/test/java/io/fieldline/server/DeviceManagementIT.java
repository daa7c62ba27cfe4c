package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.message.connect.connack.Mqtt3ConnAckReturnCode;
import io.fieldline.common.DeviceId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's device management REST API against a real server and Cassandra: update through
 * {@code POST /api/device} with the device's id, look-up by name, and the {@code PageData} listing
 * over several pages with a text search and every sort.
 */
class DeviceManagementIT extends RestTestBase {

  @Test
  void should_rename_relabel_and_keep_the_device_usable_with_its_token() {
    JsonNode created =
        ok(post("/api/device?accessToken=mgmt-rename-token", "{\"name\":\"mgmt-old\"}"));
    String id = created.at("/id/id").asText();

    JsonNode updated =
        ok(
            post(
                "/api/device",
                "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                    + id
                    + "\"},\"name\":\"mgmt-new\",\"type\":\"boiler\",\"label\":\"Basement\","
                    + "\"additionalInfo\":{\"description\":\"east\",\"gateway\":false}}"));

    assertThat(updated.at("/id/id").asText()).isEqualTo(id);
    assertThat(updated.get("createdTime").asLong()).isEqualTo(created.get("createdTime").asLong());
    JsonNode read = ok(get("/api/device/" + id));
    assertThat(read.get("name").asText()).isEqualTo("mgmt-new");
    assertThat(read.get("type").asText()).isEqualTo("boiler");
    assertThat(read.get("label").asText()).isEqualTo("Basement");
    assertThat(read.get("additionalInfo").toString())
        .isEqualTo("{\"description\":\"east\",\"gateway\":false}");
    assertThat(ok(get("/api/tenant/devices?deviceName=mgmt-new")).at("/id/id").asText())
        .isEqualTo(id);
    assertError(get("/api/tenant/devices?deviceName=mgmt-old"), 404);
    assertThat(ok(get("/api/device/" + id + "/credentials")).get("credentialsId").asText())
        .isEqualTo("mgmt-rename-token");
    Mqtt3BlockingClient device = client("mgmt-rename");
    assertThat(
            device
                .connectWith()
                .simpleAuth()
                .username("mgmt-rename-token")
                .applySimpleAuth()
                .send()
                .getReturnCode())
        .isEqualTo(Mqtt3ConnAckReturnCode.SUCCESS);
    device.disconnect();
  }

  @Test
  void should_answer_409_for_a_taken_name_and_404_for_an_unknown_id() {
    ok(post("/api/device", "{\"name\":\"mgmt-taken\"}"));
    String mine = ok(post("/api/device", "{\"name\":\"mgmt-mine\"}")).at("/id/id").asText();

    assertError(post("/api/device", update(mine, "mgmt-taken")), 409);
    assertError(post("/api/device", update(DeviceId.random().toString(), "mgmt-ghost")), 404);
    assertThat(ok(get("/api/device/" + mine)).get("name").asText()).isEqualTo("mgmt-mine");
  }

  @Test
  void should_create_with_label_and_additional_info() {
    JsonNode created =
        ok(
            post(
                "/api/device",
                "{\"name\":\"mgmt-labelled\",\"label\":\"Roof\",\"additionalInfo\":{\"k\":1}}"));

    JsonNode read = ok(get("/api/device/" + created.at("/id/id").asText()));
    assertThat(read.get("label").asText()).isEqualTo("Roof");
    assertThat(read.at("/additionalInfo/k").asInt()).isEqualTo(1);
  }

  @Test
  void should_page_through_a_searched_list_in_every_sort_and_order() {
    List<Listed> devices = new ArrayList<>();
    // Names, types, labels and creation times each in a different order; other tests' devices do
    // not match the search.
    String[][] fields = {
      {"pg-delta", "t-c", "l-b"},
      {"pg-alpha", "t-e", "l-d"},
      {"pg-echo", "t-a", "l-e"},
      {"pg-charlie", "t-d", "l-a"},
      {"pg-bravo", "t-b", "l-c"},
    };
    for (String[] field : fields) {
      JsonNode created =
          ok(
              post(
                  "/api/device",
                  "{\"name\":\""
                      + field[0]
                      + "\",\"type\":\""
                      + field[1]
                      + "\",\"label\":\""
                      + field[2]
                      + "\"}"));
      long createdTime = created.get("createdTime").asLong();
      devices.add(new Listed(field[0], field[1], field[2], createdTime));
      // Distinct creation times, so that createdTime alone orders them.
      await().atMost(Duration.ofSeconds(1)).until(() -> System.currentTimeMillis() > createdTime);
    }
    ok(post("/api/device", "{\"name\":\"not-listed\"}"));

    expectOrder(devices, "name", Listed::name);
    expectOrder(devices, "createdTime", d -> String.format("%020d", d.createdTime()));
    expectOrder(devices, "type", Listed::type);
    expectOrder(devices, "label", Listed::label);
    JsonNode defaults = ok(get("/api/tenant/devices?pageSize=10&textSearch=PG-"));
    assertThat(defaults.get("data").findValuesAsText("name"))
        .containsExactly("pg-alpha", "pg-bravo", "pg-charlie", "pg-delta", "pg-echo");
  }

  @Test
  void should_answer_400_for_an_unknown_sort_or_a_missing_page_size() {
    assertError(get("/api/tenant/devices?pageSize=10&sortProperty=customerTitle"), 400);
    assertError(get("/api/tenant/devices?pageSize=10&sortOrder=SIDEWAYS"), 400);
    assertError(get("/api/tenant/devices?page=0"), 400);
  }

  /** Reads the searched list in pages of 2, in both orders, and compares with {@code key}. */
  private void expectOrder(List<Listed> devices, String property, Function<Listed, String> key) {
    List<String> ascending =
        devices.stream().sorted(Comparator.comparing(key)).map(Listed::name).toList();
    List<String> descending = new ArrayList<>(ascending);
    java.util.Collections.reverse(descending);
    assertThat(pages(property, "ASC")).as(property + " ASC").isEqualTo(ascending);
    assertThat(pages(property, "DESC")).as(property + " DESC").isEqualTo(descending);
  }

  private List<String> pages(String property, String order) {
    List<String> names = new ArrayList<>();
    for (int page = 0; page < 3; page++) {
      JsonNode data =
          ok(
              get(
                  "/api/tenant/devices?pageSize=2&page="
                      + page
                      + "&textSearch=pg-&sortProperty="
                      + property
                      + "&sortOrder="
                      + order));
      assertThat(data.get("totalElements").asLong()).isEqualTo(5);
      assertThat(data.get("totalPages").asInt()).isEqualTo(3);
      assertThat(data.get("hasNext").asBoolean()).isEqualTo(page < 2);
      assertThat(data.get("data")).hasSize(page < 2 ? 2 : 1);
      names.addAll(data.get("data").findValuesAsText("name"));
    }
    return names;
  }

  private static String update(String id, String name) {
    return "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\"" + id + "\"},\"name\":\"" + name + "\"}";
  }

  private record Listed(String name, String type, String label, long createdTime) {}
}
