package io.fieldline.server.provision;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Device profiles over ThingsBoard's REST API on a real server: their shape, paging and search,
 * validation, unique names and keys, the write-only secret, the default profile, deletion rules,
 * and a device naming its profile ({@code deviceProfileId}).
 */
class DeviceProfileRestIT extends ProvisionTestBase {

  @Test
  void should_answer_thingsboards_shape_when_a_profile_is_created_and_read() {
    String body =
        "{\"name\":\"Thermometers\",\"description\":\"all of them\",\"type\":\"DEFAULT\","
            + "\"transportType\":\"MQTT\",\"provisionType\":\"ALLOW_CREATE_NEW_DEVICES\","
            + "\"provisionDeviceKey\":\"thermo-key\",\"profileData\":{\"provisionConfiguration\":"
            + "{\"type\":\"ALLOW_CREATE_NEW_DEVICES\",\"provisionDeviceSecret\":\"thermo-secret\"}}}";

    JsonNode created = ok(post("/api/deviceProfile", body));

    assertThat(created.path("id").path("entityType").asText()).isEqualTo("DEVICE_PROFILE");
    assertThat(created.path("name").asText()).isEqualTo("Thermometers");
    assertThat(created.path("description").asText()).isEqualTo("all of them");
    assertThat(created.path("transportType").asText()).isEqualTo("MQTT");
    assertThat(created.path("provisionType").asText()).isEqualTo("ALLOW_CREATE_NEW_DEVICES");
    assertThat(created.path("provisionDeviceKey").asText()).isEqualTo("thermo-key");
    assertThat(created.path("default").asBoolean()).isFalse();
    assertThat(created.path("createdTime").asLong()).isPositive();
    JsonNode provision = created.path("profileData").path("provisionConfiguration");
    assertThat(provision.path("type").asText()).isEqualTo("ALLOW_CREATE_NEW_DEVICES");
    // The answer to the save shows the secret it was given; reads never do.
    assertThat(provision.path("provisionDeviceSecret").asText()).isEqualTo("thermo-secret");

    String id = created.path("id").path("id").asText();
    JsonNode read = ok(get("/api/deviceProfile/" + id));
    assertThat(read.path("name").asText()).isEqualTo("Thermometers");
    assertThat(read.path("provisionDeviceKey").asText()).isEqualTo("thermo-key");
    assertThat(
            read.path("profileData")
                .path("provisionConfiguration")
                .path("provisionDeviceSecret")
                .isNull())
        .isTrue();
    assertThat(read.toString()).doesNotContain("thermo-secret");
    // No secret, password or key hash in the stored row's text either.
    assertThat(cql.execute("SELECT * FROM device_profiles").all().toString())
        .doesNotContain("thermo-secret");
  }

  @Test
  void should_page_sort_and_search_when_profiles_are_listed() {
    for (String name : List.of("list-c", "list-a", "list-b", "other-x")) {
      createProfile(name, "DISABLED", null, null);
    }

    JsonNode first = ok(get("/api/deviceProfiles?pageSize=2&page=0&textSearch=LIST-"));
    assertThat(names(first)).containsExactly("list-a", "list-b");
    assertThat(first.path("totalElements").asLong()).isEqualTo(3);
    assertThat(first.path("totalPages").asInt()).isEqualTo(2);
    assertThat(first.path("hasNext").asBoolean()).isTrue();

    JsonNode second = ok(get("/api/deviceProfiles?pageSize=2&page=1&textSearch=list-"));
    assertThat(names(second)).containsExactly("list-c");
    assertThat(second.path("hasNext").asBoolean()).isFalse();

    JsonNode descending =
        ok(get("/api/deviceProfiles?pageSize=10&textSearch=list&sortProperty=name&sortOrder=DESC"));
    assertThat(names(descending)).containsExactly("list-c", "list-b", "list-a");
  }

  private static List<String> names(JsonNode page) {
    List<String> names = new ArrayList<>();
    page.path("data").forEach(profile -> names.add(profile.path("name").asText()));
    return names;
  }

  @Test
  void should_refuse_invalid_profiles_with_400_when_saved() {
    error(post("/api/deviceProfile", "{\"name\":\"\"}"), 400);
    error(post("/api/deviceProfile", "not json"), 400);
    error(post("/api/deviceProfile", "{\"name\":\"bad-type\",\"type\":\"LWM2M\"}"), 400);
    error(post("/api/deviceProfile", "{\"name\":\"bad-transport\",\"transportType\":\"X\"}"), 400);
    error(
        post("/api/deviceProfile", "{\"name\":\"bad-provision\",\"provisionType\":\"SOMETIMES\"}"),
        400);
    assertThat(
            error(
                post(
                    "/api/deviceProfile",
                    "{\"name\":\"no-key\",\"provisionType\":\"ALLOW_CREATE_NEW_DEVICES\"}"),
                400))
        .contains("provisionDeviceKey");
    assertThat(
            error(
                post(
                    "/api/deviceProfile",
                    "{\"name\":\"no-secret\",\"provisionType\":\"ALLOW_CREATE_NEW_DEVICES\","
                        + "\"provisionDeviceKey\":\"no-secret-key\"}"),
                400))
        .contains("provisionDeviceSecret");
    error(get("/api/deviceProfiles?page=0"), 400);
    error(get("/api/deviceProfiles?pageSize=10&sortProperty=color"), 400);
    error(get("/api/deviceProfile/" + java.util.UUID.randomUUID()), 404);
    // Nothing of the refused ones was stored.
    assertThat(
            ok(get("/api/deviceProfiles?pageSize=100&textSearch=no-"))
                .path("totalElements")
                .asLong())
        .isZero();
  }

  @Test
  void should_refuse_a_taken_name_or_key_with_409_when_saved() {
    createProfile("unique-name", "ALLOW_CREATE_NEW_DEVICES", "unique-key", "s1");

    error(
        post("/api/deviceProfile", "{\"name\":\"unique-name\",\"provisionType\":\"DISABLED\"}"),
        409);
    error(
        post(
            "/api/deviceProfile",
            "{\"name\":\"other-name\",\"provisionType\":\"CHECK_PRE_PROVISIONED_DEVICES\","
                + "\"provisionDeviceKey\":\"unique-key\",\"profileData\":{\"provisionConfiguration\":"
                + "{\"provisionDeviceSecret\":\"s2\"}}}"),
        409);
    // The refused create did not keep its name: it can be used.
    createProfile("other-name", "DISABLED", null, null);
  }

  @Test
  void should_rename_and_keep_the_secret_when_an_update_has_none() {
    String id = createProfile("before-rename", "ALLOW_CREATE_NEW_DEVICES", "rename-key", "keep-me");
    JsonNode read = ok(get("/api/deviceProfile/" + id));
    ((com.fasterxml.jackson.databind.node.ObjectNode) read).put("name", "after-rename");

    JsonNode updated = ok(post("/api/deviceProfile", read.toString()));

    assertThat(updated.path("name").asText()).isEqualTo("after-rename");
    assertThat(updated.path("id").path("id").asText()).isEqualTo(id);
    assertThat(ok(get("/api/deviceProfile/" + id)).path("name").asText()).isEqualTo("after-rename");
    // The old name is free again, the new one taken.
    createProfile("before-rename", "DISABLED", null, null);
    error(post("/api/deviceProfile", "{\"name\":\"after-rename\"}"), 409);
  }

  @Test
  void should_refuse_to_delete_a_profile_devices_have_and_delete_it_once_they_have_another() {
    String used = createProfile("in-use", "DISABLED", null, null);
    String spare = createProfile("spare", "DISABLED", null, null);
    JsonNode device =
        ok(
            post(
                "/api/device",
                "{\"name\":\"profiled-device\",\"type\":\"meter\",\"deviceProfileId\":"
                    + "{\"entityType\":\"DEVICE_PROFILE\",\"id\":\""
                    + used
                    + "\"}}"));
    assertThat(device.path("deviceProfileId").path("id").asText()).isEqualTo(used);
    assertThat(device.path("deviceProfileId").path("entityType").asText())
        .isEqualTo("DEVICE_PROFILE");
    String deviceId = device.path("id").path("id").asText();
    assertThat(ok(get("/api/device/" + deviceId)).path("deviceProfileId").path("id").asText())
        .isEqualTo(used);

    error(delete("/api/deviceProfile/" + used), 409);
    assertThat(ok(get("/api/deviceProfile/" + used)).path("name").asText()).isEqualTo("in-use");

    // An update without deviceProfileId keeps the profile; one with another moves the device.
    JsonNode kept =
        ok(
            post(
                "/api/device",
                "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                    + deviceId
                    + "\"},\"name\":\"profiled-device\",\"type\":\"meter\"}"));
    assertThat(kept.path("deviceProfileId").path("id").asText()).isEqualTo(used);
    JsonNode moved =
        ok(
            post(
                "/api/device",
                "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                    + deviceId
                    + "\"},\"name\":\"profiled-device\",\"type\":\"meter\",\"deviceProfileId\":"
                    + "{\"entityType\":\"DEVICE_PROFILE\",\"id\":\""
                    + spare
                    + "\"}}"));
    assertThat(moved.path("deviceProfileId").path("id").asText()).isEqualTo(spare);
    JsonNode listed = ok(get("/api/tenant/devices?pageSize=10&textSearch=profiled-device"));
    assertThat(listed.path("data").get(0).path("deviceProfileId").path("id").asText())
        .isEqualTo(spare);

    ok(delete("/api/deviceProfile/" + used));
    error(get("/api/deviceProfile/" + used), 404);
    error(delete("/api/deviceProfile/" + used), 404);
    // The deleted profile's name is free again.
    createProfile("in-use", "DISABLED", null, null);
  }

  @Test
  void should_refuse_a_device_naming_an_unknown_profile_and_create_nothing() {
    long before = deviceCount();

    error(
        post(
            "/api/device",
            "{\"name\":\"orphan\",\"deviceProfileId\":{\"entityType\":\"DEVICE_PROFILE\",\"id\":\""
                + java.util.UUID.randomUUID()
                + "\"}}"),
        400);
    error(
        post(
            "/api/device",
            "{\"name\":\"orphan\",\"deviceProfileId\":{\"entityType\":\"DEVICE\",\"id\":\"x\"}}"),
        400);

    assertThat(deviceCount()).isEqualTo(before);
    assertThat(deviceNamed("orphan")).isNull();
  }

  @Test
  void should_keep_one_default_profile_and_refuse_to_delete_it() {
    String first = createProfile("default-one", "DISABLED", null, null);
    String second = createProfile("default-two", "DISABLED", null, null);

    assertThat(ok(post("/api/deviceProfile/" + first + "/default", "")).path("default").asBoolean())
        .isTrue();
    error(delete("/api/deviceProfile/" + first), 409);

    ok(post("/api/deviceProfile/" + second + "/default", ""));
    assertThat(ok(get("/api/deviceProfile/" + first)).path("default").asBoolean()).isFalse();
    assertThat(ok(get("/api/deviceProfile/" + second)).path("default").asBoolean()).isTrue();
    ok(delete("/api/deviceProfile/" + first));
  }
}
