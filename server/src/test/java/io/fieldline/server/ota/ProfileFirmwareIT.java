package io.fieldline.server.ota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;
import io.fieldline.common.device.Device;
import io.fieldline.common.ota.ChecksumAlgorithm;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A device profile's firmware end to end on a real server: assigned with ThingsBoard's {@code POST
 * /api/deviceProfile} ({@code firmwareId}), its {@code fw_*} shared attributes pushed to a real
 * MQTT client (HiveMQ's) of a device of the profile without firmware of its own, the file
 * downloaded over MQTT and its checksum verified; a device with its own firmware keeps it, and
 * falls back to the profile's once its own is removed; removing the profile's firmware, moving a
 * device to another profile, the package checks and the refused package delete.
 */
class ProfileFirmwareIT extends OtaTestBase {

  private static final Duration WAIT = Duration.ofSeconds(30);

  private final List<Mqtt3AsyncClient> clients = new ArrayList<>();

  @AfterEach
  void disconnect() {
    for (Mqtt3AsyncClient client : clients) {
      if (client.getState().isConnected()) {
        client.disconnect().join();
      }
    }
    clients.clear();
  }

  /** A device connected over MQTT 3.1.1, subscribed to its attributes and firmware responses. */
  private Mqtt3AsyncClient connect(Device device, BlockingQueue<Mqtt3Publish> inbox) {
    Mqtt3AsyncClient client =
        Mqtt3Client.builder()
            .identifier("pfw-" + device.name())
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .buildAsync();
    client.publishes(MqttGlobalPublishFilter.ALL, inbox::add);
    client
        .connectWith()
        .simpleAuth()
        .username(device.accessToken())
        .applySimpleAuth()
        .send()
        .join();
    clients.add(client);
    for (String filter : List.of("v1/devices/me/attributes", "v2/fw/response/+")) {
      client.subscribeWith().topicFilter(filter).qos(MqttQos.AT_LEAST_ONCE).send().join();
    }
    return client;
  }

  /** The next PUBLISH on {@code topic}, skipping others; fails after {@link #WAIT}. */
  private static Mqtt3Publish next(BlockingQueue<Mqtt3Publish> inbox, String topic)
      throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (System.nanoTime() < deadline) {
      Mqtt3Publish publish = inbox.poll(100, TimeUnit.MILLISECONDS);
      if (publish != null && publish.getTopic().toString().equals(topic)) {
        return publish;
      }
    }
    throw new AssertionError("nothing on " + topic + " within " + WAIT);
  }

  private static JsonNode nextAttributes(BlockingQueue<Mqtt3Publish> inbox) throws Exception {
    return JSON.readTree(next(inbox, "v1/devices/me/attributes").getPayloadAsBytes());
  }

  private String uploaded(String title, String version, byte[] data) {
    String id = createPackage(title, version);
    ok(upload(id, "checksumAlgorithm=SHA256", data));
    return id;
  }

  private String createProfile(String name) {
    JsonNode created = ok(post("/api/deviceProfile", admin, "{\"name\":\"" + name + "\"}"));
    return created.at("/id/id").asText();
  }

  /** {@code POST /api/deviceProfile} updating the profile's firmware ({@code null}: none). */
  private HttpResponse<String> saveProfile(String profileId, String name, String firmwareJson) {
    return post(
        "/api/deviceProfile",
        admin,
        "{\"id\":{\"entityType\":\"DEVICE_PROFILE\",\"id\":\""
            + profileId
            + "\"},\"name\":\""
            + name
            + "\",\"description\":\"saved\",\"firmwareId\":"
            + firmwareJson
            + "}");
  }

  /** ThingsBoard's device save giving the device the profile. */
  private void moveDevice(Device device, String profileId) {
    JsonNode saved =
        ok(
            post(
                "/api/device",
                admin,
                "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                    + device.id()
                    + "\"},\"name\":\""
                    + device.name()
                    + "\",\"type\":\"test\",\"deviceProfileId\":{\"entityType\":\"DEVICE_PROFILE\","
                    + "\"id\":\""
                    + profileId
                    + "\"}}"));
    assertThat(saved.at("/deviceProfileId/id").asText()).isEqualTo(profileId);
  }

  private void assignOwn(Device device, String firmwareJson) {
    ok(
        post(
            "/api/fieldline/device/" + device.id() + "/firmware",
            admin,
            "{\"firmwareId\":" + firmwareJson + "}"));
  }

  /** Devices brought up to date so far, whatever the outcome. */
  private double syncs() {
    return metric("fieldline_ota_firmware_syncs_total{outcome=\"unchanged\"")
        + metric("fieldline_ota_firmware_syncs_total{outcome=\"updated\"")
        + metric("fieldline_ota_firmware_syncs_total{outcome=\"failed\"");
  }

  private String sharedAttributes(Device device) {
    return get(
            "/api/plugins/telemetry/DEVICE/" + device.id() + "/values/attributes/SHARED_SCOPE",
            admin)
        .body();
  }

  @Test
  void
      should_push_and_serve_the_profiles_firmware_when_a_device_of_the_profile_has_none_of_its_own()
          throws Exception {
    byte[] firmware = randomBytes(150_000);
    String sha256 = ChecksumAlgorithm.SHA256.of(firmware);
    String packageId = uploaded("fleet-fw", "3.0", firmware);
    String ownId = uploaded("own-fw", "1.0", randomBytes(1000));
    String profileId = createProfile("pfw-fleet");
    Device plain = createDevice("pfw-plain", "pfw-plain-token");
    Device withOwn = createDevice("pfw-own", "pfw-own-token");
    moveDevice(plain, profileId);
    moveDevice(withOwn, profileId);
    assignOwn(withOwn, packageRef(ownId));
    BlockingQueue<Mqtt3Publish> inbox = new LinkedBlockingQueue<>();
    Mqtt3AsyncClient client = connect(plain, inbox);
    double unchangedBefore = metric("fieldline_ota_firmware_syncs_total{outcome=\"unchanged\"");

    JsonNode saved = ok(saveProfile(profileId, "pfw-fleet", packageRef(packageId)));

    assertThat(saved.at("/firmwareId/id").asText()).isEqualTo(packageId);
    assertThat(saved.get("description").asText()).isEqualTo("saved");
    JsonNode pushed = nextAttributes(inbox);
    assertThat(pushed.get("fw_title").asText()).isEqualTo("fleet-fw");
    assertThat(pushed.get("fw_version").asText()).isEqualTo("3.0");
    assertThat(pushed.get("fw_size").asLong()).isEqualTo(firmware.length);
    assertThat(pushed.get("fw_checksum_algorithm").asText()).isEqualTo("SHA256");
    assertThat(pushed.get("fw_checksum").asText()).isEqualTo(sha256);
    ByteArrayOutputStream received = new ByteArrayOutputStream();
    int chunkSize = 64 * 1024;
    for (int chunk = 0; received.size() < pushed.get("fw_size").asLong(); chunk++) {
      client
          .publishWith()
          .topic("v2/fw/request/7/chunk/" + chunk)
          .qos(MqttQos.AT_LEAST_ONCE)
          .payload(String.valueOf(chunkSize).getBytes(StandardCharsets.US_ASCII))
          .send()
          .join();
      received.writeBytes(next(inbox, "v2/fw/response/7/chunk/" + chunk).getPayloadAsBytes());
    }
    assertThat(ChecksumAlgorithm.SHA256.of(received.toByteArray()))
        .as("downloaded the profile's firmware")
        .isEqualTo(sha256);
    // The device with its own firmware was met by the fan-out and left as it was.
    await()
        .atMost(WAIT)
        .until(
            () ->
                metric("fieldline_ota_firmware_syncs_total{outcome=\"unchanged\"")
                    > unchangedBefore);
    assertThat(sharedAttributes(withOwn)).contains("own-fw").doesNotContain("fleet-fw");
    assertThat(ok(get("/api/deviceProfile/" + profileId, admin)).at("/firmwareId/id").asText())
        .isEqualTo(packageId);
    JsonNode listed = ok(get("/api/deviceProfiles?pageSize=100&textSearch=pfw-fleet", admin));
    assertThat(listed.at("/data/0/firmwareId/id").asText()).isEqualTo(packageId);
    assertThat(ok(get("/api/device/" + plain.id(), admin)).get("firmwareId").isNull())
        .as("a device's firmwareId is its own")
        .isTrue();
  }

  @Test
  void should_fall_back_to_the_profiles_firmware_and_clear_it_when_each_is_removed()
      throws Exception {
    String packageId = uploaded("fallback-fw", "2.0", randomBytes(5000));
    String ownId = uploaded("fallback-own", "1.0", randomBytes(5000));
    String profileId = createProfile("pfw-fallback");
    Device device = createDevice("pfw-fallback", "pfw-fallback-token");
    moveDevice(device, profileId);
    assignOwn(device, packageRef(ownId));
    double syncsBefore = syncs();
    ok(saveProfile(profileId, "pfw-fallback", packageRef(packageId)));
    // The fan-out the save started meets the device (its own firmware: left as it is).
    await().atMost(WAIT).until(() -> syncs() > syncsBefore);
    BlockingQueue<Mqtt3Publish> inbox = new LinkedBlockingQueue<>();
    connect(device, inbox);

    assertThat(error(delete("/api/otaPackage/" + packageId), 409)).contains("device profile");
    assignOwn(device, "null");
    JsonNode fallback = nextAttributes(inbox);
    ok(saveProfile(profileId, "pfw-fallback", "null"));
    JsonNode cleared = nextAttributes(inbox);

    assertThat(fallback.get("fw_title").asText()).isEqualTo("fallback-fw");
    assertThat(fallback.get("fw_version").asText()).isEqualTo("2.0");
    assertThat(cleared.get("deleted")).as("ThingsBoard's push of deleted keys").isNotNull();
    assertThat(cleared.get("deleted").toString()).contains("fw_title").contains("fw_checksum");
    await()
        .atMost(WAIT)
        .untilAsserted(() -> assertThat(sharedAttributes(device)).doesNotContain("fw_"));
    assertThat(ok(get("/api/deviceProfile/" + profileId, admin)).get("firmwareId").isNull())
        .isTrue();
    assertThat(ok(delete("/api/otaPackage/" + packageId)).isObject()).isTrue();
    assertThat(ok(delete("/api/otaPackage/" + ownId)).isObject()).isTrue();
  }

  @Test
  void should_end_with_attributes_describing_the_devices_firmware_when_assignments_race()
      throws Exception {
    String first = uploaded("race-first", "1.0", randomBytes(500));
    String second = uploaded("race-second", "1.0", randomBytes(500));
    String profileId = createProfile("pfw-race");
    ok(saveProfile(profileId, "pfw-race", packageRef(first)));
    Device device = createDevice("pfw-race", "pfw-race-token");
    moveDevice(device, profileId);
    java.util.concurrent.ExecutorService callers =
        java.util.concurrent.Executors.newFixedThreadPool(6);
    try {
      List<java.util.concurrent.Future<?>> calls = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        String firmwareJson =
            switch (i % 3) {
              case 0 -> packageRef(first);
              case 1 -> packageRef(second);
              default -> "null";
            };
        calls.add(callers.submit(() -> assignOwn(device, firmwareJson)));
      }
      for (java.util.concurrent.Future<?> call : calls) {
        call.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      }
    } finally {
      callers.shutdownNow();
    }

    JsonNode own = ok(get("/api/device/" + device.id(), admin)).get("firmwareId");
    String expected =
        own.isNull()
            ? "race-first"
            : own.at("/id").asText().equals(first) ? "race-first" : "race-second";
    String other = expected.equals("race-first") ? "race-second" : "race-first";
    assertThat(sharedAttributes(device))
        .as("its own firmware, else its profile's (race-first)")
        .contains(expected)
        .doesNotContain(other);
  }

  @Test
  void should_give_a_device_its_new_profiles_firmware_when_moved_to_another_profile()
      throws Exception {
    String packageId = uploaded("moved-fw", "5.1", randomBytes(3000));
    String without = createProfile("pfw-without");
    String with = createProfile("pfw-with");
    ok(saveProfile(with, "pfw-with", packageRef(packageId)));
    Device device = createDevice("pfw-moved", "pfw-moved-token");
    moveDevice(device, without);
    BlockingQueue<Mqtt3Publish> inbox = new LinkedBlockingQueue<>();
    connect(device, inbox);

    moveDevice(device, with);
    JsonNode given = nextAttributes(inbox);
    moveDevice(device, without);
    JsonNode taken = nextAttributes(inbox);

    assertThat(given.get("fw_title").asText()).isEqualTo("moved-fw");
    assertThat(given.get("fw_version").asText()).isEqualTo("5.1");
    assertThat(taken.get("deleted")).isNotNull();
  }

  @Test
  void should_refuse_a_package_meant_for_another_profile_or_without_data_and_save_nothing() {
    String profileId = createProfile("pfw-checked");
    String otherProfile = createProfile("pfw-other");
    JsonNode created =
        ok(
            post(
                "/api/otaPackage",
                admin,
                "{\"title\":\"others-fw\",\"version\":\"1.0\",\"deviceProfileId\":"
                    + "{\"entityType\":\"DEVICE_PROFILE\",\"id\":\""
                    + otherProfile
                    + "\"}}"));
    String othersId = created.at("/id/id").asText();
    ok(upload(othersId, "checksumAlgorithm=MD5", randomBytes(100)));
    String emptyId = createPackage("empty-profile-fw", "1.0");

    String meantForOther = error(saveProfile(profileId, "pfw-checked", packageRef(othersId)), 400);
    String withoutData = error(saveProfile(profileId, "pfw-checked", packageRef(emptyId)), 400);
    String onCreate =
        error(
            post(
                "/api/deviceProfile",
                admin,
                "{\"name\":\"pfw-new\",\"firmwareId\":" + packageRef(othersId) + "}"),
            400);

    assertThat(meantForOther).contains(otherProfile);
    assertThat(withoutData).contains("no data");
    assertThat(onCreate).contains(otherProfile);
    JsonNode unchanged = ok(get("/api/deviceProfile/" + profileId, admin));
    assertThat(unchanged.get("description").isNull()).as("nothing saved").isTrue();
    assertThat(unchanged.get("firmwareId").isNull()).isTrue();
    assertThat(
            ok(get("/api/deviceProfiles?pageSize=10&textSearch=pfw-new", admin))
                .get("totalElements")
                .asInt())
        .isZero();
    JsonNode own = ok(saveProfile(otherProfile, "pfw-other", packageRef(othersId)));
    assertThat(own.at("/firmwareId/id").asText())
        .as("its own profile's package")
        .isEqualTo(othersId);
  }

  @Test
  void should_release_the_package_when_the_profile_assigned_it_is_deleted() {
    String packageId = uploaded("gone-profile-fw", "1.0", randomBytes(100));
    JsonNode created =
        ok(
            post(
                "/api/deviceProfile",
                admin,
                "{\"name\":\"pfw-gone\",\"firmwareId\":" + packageRef(packageId) + "}"));
    assertThat(created.at("/firmwareId/id").asText()).isEqualTo(packageId);
    String profileId = created.at("/id/id").asText();
    assertThat(error(delete("/api/otaPackage/" + packageId), 409)).contains(profileId);

    ok(delete("/api/deviceProfile/" + profileId));

    assertThat(ok(delete("/api/otaPackage/" + packageId)).isObject()).isTrue();
    assertThat(
            cql.execute(
                    "SELECT count(*) FROM profile_firmware WHERE profile_id = ?",
                    java.util.UUID.fromString(profileId))
                .one()
                .getLong(0))
        .isZero();
  }

  @Test
  void should_give_a_provisioned_device_its_profiles_firmware_when_it_provisions_itself() {
    byte[] firmware = randomBytes(20_000);
    String packageId = uploaded("provisioned-fw", "4.2", firmware);
    ok(
        post(
            "/api/deviceProfile",
            admin,
            "{\"name\":\"pfw-provisioning\",\"provisionType\":\"ALLOW_CREATE_NEW_DEVICES\","
                + "\"provisionDeviceKey\":\"pfw-key\",\"profileData\":{\"provisionConfiguration\":"
                + "{\"provisionDeviceSecret\":\"pfw-secret\"}},\"firmwareId\":"
                + packageRef(packageId)
                + "}"));

    JsonNode answer =
        ok(
            post(
                "/api/v1/provision",
                null,
                "{\"deviceName\":\"pfw-provisioned\",\"provisionDeviceKey\":\"pfw-key\","
                    + "\"provisionDeviceSecret\":\"pfw-secret\"}"));

    assertThat(answer.get("status").asText()).isEqualTo("SUCCESS");
    String token = answer.get("credentialsValue").asText();
    String deviceId =
        ok(get("/api/tenant/devices?deviceName=pfw-provisioned", admin)).at("/id/id").asText();
    JsonNode shared =
        ok(
            get(
                "/api/plugins/telemetry/DEVICE/" + deviceId + "/values/attributes/SHARED_SCOPE",
                admin));
    assertThat(shared.toString())
        .as("set before the provisioning answered")
        .contains("provisioned-fw")
        .contains(ChecksumAlgorithm.SHA256.of(firmware));
    HttpResponse<byte[]> download =
        getBytes("/api/v1/" + token + "/firmware?title=provisioned-fw&version=4.2", null);
    assertThat(download.statusCode()).isEqualTo(200);
    assertThat(download.body()).isEqualTo(firmware);
  }
}
