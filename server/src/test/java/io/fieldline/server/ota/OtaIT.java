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
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Over-the-air firmware end to end on a real server: a package uploaded over REST as multipart (JDK
 * HttpClient), assigned to a device over ThingsBoard's {@code POST /api/device}, the {@code fw_*}
 * shared attributes pushed to a real MQTT client (HiveMQ's) that subscribed like ThingsBoard's
 * Python SDK ({@code v2/fw/response/+}), the file fetched in chunks over MQTT and over the HTTP
 * device API, and the refusals: a wrong checksum, a chunk above the maximum, a file above the
 * maximum package size, deleting a package in use.
 */
class OtaIT extends OtaTestBase {

  private static final int ONE_MIB = 1024 * 1024;
  private static final Duration WAIT = Duration.ofSeconds(30);

  private Mqtt3AsyncClient mqtt;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of("fieldline.ota.max-package-size", "2 MiB");
  }

  @AfterEach
  void disconnect() {
    if (mqtt != null && mqtt.getState().isConnected()) {
      mqtt.disconnect().join();
    }
  }

  /** A device connected over MQTT 3.1.1 whose every incoming PUBLISH lands in {@code inbox}. */
  private Mqtt3AsyncClient connect(Device device, BlockingQueue<Mqtt3Publish> inbox) {
    Mqtt3AsyncClient client =
        Mqtt3Client.builder()
            .identifier("ota-" + device.name())
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .buildAsync();
    // Every PUBLISH, whether or not a subscription's filter matches its topic.
    client.publishes(MqttGlobalPublishFilter.ALL, inbox::add);
    client
        .connectWith()
        .simpleAuth()
        .username(device.accessToken())
        .applySimpleAuth()
        .send()
        .join();
    mqtt = client;
    return client;
  }

  private static void subscribe(Mqtt3AsyncClient client, String filter, MqttQos qos) {
    client.subscribeWith().topicFilter(filter).qos(qos).send().join();
  }

  private static void request(Mqtt3AsyncClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.US_ASCII))
        .send()
        .join();
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

  private String uploaded(String title, byte[] data) {
    String id = createPackage(title, "1.0");
    JsonNode info = ok(upload(id, "checksumAlgorithm=SHA256", data));
    assertThat(info.get("checksum").asText()).isEqualTo(ChecksumAlgorithm.SHA256.of(data));
    return id;
  }

  private void assignWithDeviceSave(Device device, String packageId) {
    JsonNode saved =
        ok(
            post(
                "/api/device",
                admin,
                "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                    + device.id()
                    + "\"},\"name\":\""
                    + device.name()
                    + "\",\"type\":\"test\",\"firmwareId\":"
                    + packageRef(packageId)
                    + "}"));
    assertThat(saved.at("/firmwareId/id").asText()).isEqualTo(packageId);
  }

  @Test
  void should_deliver_a_one_mib_firmware_in_chunks_over_mqtt_when_assigned_to_a_subscribed_device()
      throws Exception {
    byte[] firmware = randomBytes(ONE_MIB);
    String sha256 = ChecksumAlgorithm.SHA256.of(firmware);
    String packageId = createPackage("mqtt-fw", "2.1");
    JsonNode info = ok(upload(packageId, "checksumAlgorithm=SHA256", firmware));
    assertThat(info.get("checksum").asText()).as("computed by the server").isEqualTo(sha256);
    assertThat(info.get("checksumAlgorithm").asText()).isEqualTo("SHA256");
    assertThat(info.get("dataSize").asLong()).isEqualTo(ONE_MIB);
    assertThat(info.get("hasData").asBoolean()).isTrue();
    Device device = createDevice("ota-mqtt", "ota-mqtt-token");
    BlockingQueue<Mqtt3Publish> inbox = new LinkedBlockingQueue<>();
    Mqtt3AsyncClient client = connect(device, inbox);
    subscribe(client, "v1/devices/me/attributes", MqttQos.AT_LEAST_ONCE);
    subscribe(client, "v2/fw/response/+", MqttQos.AT_MOST_ONCE);

    assignWithDeviceSave(device, packageId);

    JsonNode pushed = JSON.readTree(next(inbox, "v1/devices/me/attributes").getPayloadAsBytes());
    assertThat(pushed.get("fw_title").asText()).isEqualTo("mqtt-fw");
    assertThat(pushed.get("fw_version").asText()).isEqualTo("2.1");
    assertThat(pushed.get("fw_tag").asText()).isEqualTo("mqtt-fw 2.1");
    assertThat(pushed.get("fw_size").asLong()).isEqualTo(ONE_MIB);
    assertThat(pushed.get("fw_checksum_algorithm").asText()).isEqualTo("SHA256");
    assertThat(pushed.get("fw_checksum").asText()).isEqualTo(sha256);
    ByteArrayOutputStream received = new ByteArrayOutputStream();
    int chunkSize = 32 * 1024;
    for (int chunk = 0; received.size() < pushed.get("fw_size").asLong(); chunk++) {
      request(client, "v2/fw/request/1/chunk/" + chunk, String.valueOf(chunkSize));
      Mqtt3Publish answer = next(inbox, "v2/fw/response/1/chunk/" + chunk);
      // At the QoS granted to v2/fw/response/+, which does not match the topic by MQTT's rules:
      // the exception Fieldline makes for ThingsBoard's SDK (without it: QoS 1, as unsubscribed).
      assertThat(answer.getQos()).isEqualTo(MqttQos.AT_MOST_ONCE);
      received.writeBytes(answer.getPayloadAsBytes());
    }
    request(client, "v2/fw/request/1/chunk/32", String.valueOf(chunkSize));
    byte[] pastTheEnd = next(inbox, "v2/fw/response/1/chunk/32").getPayloadAsBytes();

    assertThat(received.size()).isEqualTo(ONE_MIB);
    assertThat(ChecksumAlgorithm.SHA256.of(received.toByteArray())).isEqualTo(sha256);
    assertThat(pastTheEnd).as("the chunk past the end is empty").isEmpty();
    assertThat(metric("fieldline_ota_chunks_total{protocol=\"mqtt\"")).isGreaterThanOrEqualTo(33);
    assertThat(ok(get("/api/device/" + device.id(), admin)).at("/firmwareId/id").asText())
        .isEqualTo(packageId);
  }

  @Test
  void should_refuse_an_oversize_chunk_on_the_error_topic_and_keep_serving_the_connection()
      throws Exception {
    String packageId = uploaded("limits-fw", randomBytes(10_000));
    Device device = createDevice("ota-limits", "ota-limits-token");
    assignWithDeviceSave(device, packageId);
    BlockingQueue<Mqtt3Publish> inbox = new LinkedBlockingQueue<>();
    Mqtt3AsyncClient client = connect(device, inbox);
    subscribe(client, "v2/fw/error", MqttQos.AT_LEAST_ONCE);
    subscribe(client, "v2/fw/response/+/chunk/+", MqttQos.AT_LEAST_ONCE);

    request(client, "v2/fw/request/5/chunk/0", String.valueOf(64 * 1024 + 1));

    assertThat(new String(next(inbox, "v2/fw/error").getPayloadAsBytes(), StandardCharsets.UTF_8))
        .isEqualTo("request 5: chunk size 65537 is above the maximum of 65536 bytes");
    assertThat(metric("fieldline_ota_refused_total{protocol=\"mqtt\",reason=\"chunk_too_large\""))
        .isEqualTo(1);
    request(client, "v2/fw/request/5/chunk/1", "4096");
    assertThat(next(inbox, "v2/fw/response/5/chunk/1").getPayloadAsBytes()).hasSize(4096);
    assertThat(client.getState().isConnected()).isTrue();
  }

  @Test
  void should_serve_the_assigned_firmware_over_the_http_device_api_in_chunks_and_whole() {
    byte[] firmware = randomBytes(200_000);
    String packageId = uploaded("http-fw", firmware);
    Device device = createDevice("ota-http", "ota-http-token");
    JsonNode assigned =
        ok(
            post(
                "/api/fieldline/device/" + device.id() + "/firmware",
                admin,
                "{\"firmwareId\":" + packageRef(packageId) + "}"));
    assertThat(assigned.at("/firmwareId/id").asText()).isEqualTo(packageId);
    String base = "/api/v1/ota-http-token/firmware?title=http-fw&version=1.0";

    ByteArrayOutputStream chunks = new ByteArrayOutputStream();
    for (int chunk = 0; chunk < 4; chunk++) {
      HttpResponse<byte[]> part = getBytes(base + "&size=65536&chunk=" + chunk, null);
      assertThat(part.statusCode()).isEqualTo(200);
      chunks.writeBytes(part.body());
    }
    HttpResponse<byte[]> whole = getBytes(base, null);
    HttpResponse<byte[]> past = getBytes(base + "&size=65536&chunk=4", null);

    assertThat(chunks.toByteArray()).isEqualTo(firmware);
    assertThat(whole.statusCode()).isEqualTo(200);
    assertThat(whole.body()).isEqualTo(firmware);
    assertThat(whole.headers().firstValue("Content-Disposition").orElseThrow())
        .contains("attachment")
        .contains("firmware.bin");
    assertThat(past.body()).isEmpty();
    assertThat(getBytes(base.replace("1.0", "9.9"), null).statusCode())
        .as("another version than the assigned one")
        .isEqualTo(400);
    assertThat(getBytes(base + "&size=65537", null).statusCode()).isEqualTo(400);
    assertThat(getBytes("/api/v1/nobody/firmware?title=http-fw&version=1.0", null).statusCode())
        .isEqualTo(401);
  }

  @Test
  void should_refuse_an_upload_whose_checksum_is_not_the_files_and_keep_nothing() {
    byte[] firmware = randomBytes(100_000);
    String packageId = createPackage("checked-fw", "1.0");

    String refused =
        error(upload(packageId, "checksumAlgorithm=SHA256&checksum=00ff", firmware), 400);

    assertThat(refused).contains("checksum");
    assertThat(ok(get("/api/otaPackage/info/" + packageId, admin)).get("hasData").asBoolean())
        .isFalse();
    assertThat(
            cql.execute(
                    "SELECT count(*) FROM ota_package_data WHERE package_id = ?",
                    java.util.UUID.fromString(packageId))
                .one()
                .getLong(0))
        .as("the refused upload's chunks removed")
        .isZero();
    String crc = ChecksumAlgorithm.CRC32.of(firmware).toUpperCase(java.util.Locale.ROOT);
    JsonNode stored = ok(upload(packageId, "checksumAlgorithm=CRC32&checksum=" + crc, firmware));
    assertThat(stored.get("checksum").asText()).isEqualTo(crc.toLowerCase(java.util.Locale.ROOT));
    assertThat(error(upload(packageId, "checksumAlgorithm=SHA256", firmware), 409))
        .contains("cannot be changed");
    assertThat(metric("fieldline_ota_uploads_total{outcome=\"bad_checksum\"")).isEqualTo(1);
  }

  @Test
  void should_refuse_a_file_above_the_maximum_package_size() {
    String packageId = createPackage("huge-fw", "1.0");

    assertThat(
            upload(packageId, "checksumAlgorithm=MD5", randomBytes(2 * ONE_MIB + 1)).statusCode())
        .isEqualTo(413);
    assertThat(ok(get("/api/otaPackage/info/" + packageId, admin)).get("hasData").asBoolean())
        .isFalse();
    assertThat(
            post("/api/otaPackage/" + packageId + "?checksumAlgorithm=MD5", admin, "{}")
                .statusCode())
        .as("not multipart")
        .isEqualTo(415);
    assertThat(metric("fieldline_ota_uploads_total{outcome=\"too_large\"")).isEqualTo(1);
  }

  @Test
  void should_list_download_and_refuse_duplicates_of_packages() {
    byte[] firmware = randomBytes(70_000);
    String packageId = uploaded("listed-fw", firmware);

    assertThat(
            post("/api/otaPackage", admin, "{\"title\":\"listed-fw\",\"version\":\"1.0\"}")
                .statusCode())
        .as("title and version taken")
        .isEqualTo(409);
    JsonNode page = ok(get("/api/otaPackages?pageSize=100&textSearch=LISTED", admin));
    assertThat(page.get("totalElements").asInt()).isEqualTo(1);
    assertThat(page.at("/data/0/id/id").asText()).isEqualTo(packageId);
    assertThat(page.at("/data/0/fileName").asText()).isEqualTo("firmware.bin");
    HttpResponse<byte[]> download = getBytes("/api/otaPackage/" + packageId + "/download", admin);
    assertThat(download.statusCode()).isEqualTo(200);
    assertThat(download.body()).isEqualTo(firmware);
    assertThat(download.headers().firstValue("Content-Disposition").orElseThrow())
        .contains("firmware.bin");
    assertThat(ok(get("/api/otaPackage/" + packageId, admin)).get("title").asText())
        .isEqualTo("listed-fw");
  }

  @Test
  void should_refuse_to_delete_an_assigned_package_until_the_firmware_is_removed()
      throws Exception {
    String packageId = uploaded("deleted-fw", randomBytes(1000));
    Device device = createDevice("ota-delete", "ota-delete-token");
    assignWithDeviceSave(device, packageId);
    BlockingQueue<Mqtt3Publish> inbox = new LinkedBlockingQueue<>();
    Mqtt3AsyncClient client = connect(device, inbox);
    subscribe(client, "v1/devices/me/attributes", MqttQos.AT_LEAST_ONCE);

    assertThat(error(delete("/api/otaPackage/" + packageId), 409)).contains("assigned");
    JsonNode removed =
        ok(
            post(
                "/api/fieldline/device/" + device.id() + "/firmware",
                admin,
                "{\"firmwareId\":null}"));

    assertThat(removed.get("firmwareId").isNull()).isTrue();
    JsonNode deleted = JSON.readTree(next(inbox, "v1/devices/me/attributes").getPayloadAsBytes());
    assertThat(deleted.get("deleted")).as("ThingsBoard's push of deleted keys").isNotNull();
    assertThat(ok(delete("/api/otaPackage/" + packageId)).isObject()).isTrue();
    assertThat(get("/api/otaPackage/info/" + packageId, admin).statusCode()).isEqualTo(404);
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(
                        get(
                                "/api/plugins/telemetry/DEVICE/"
                                    + device.id()
                                    + "/values/attributes/SHARED_SCOPE",
                                admin)
                            .body())
                    .doesNotContain("fw_"));
  }

  @Test
  void should_refuse_a_device_save_naming_a_package_without_data() {
    String packageId = createPackage("empty-fw", "1.0");
    Device device = createDevice("ota-empty", "ota-empty-token");

    String message =
        error(
            post(
                "/api/device",
                admin,
                "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                    + device.id()
                    + "\"},\"name\":\"renamed\",\"firmwareId\":"
                    + packageRef(packageId)
                    + "}"),
            400);

    assertThat(message).contains("no data");
    assertThat(ok(get("/api/device/" + device.id(), admin)).get("name").asText())
        .as("nothing saved")
        .isEqualTo("ota-empty");
  }
}
