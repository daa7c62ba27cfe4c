package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.device.Device;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Server-side and client-side RPC end to end: ThingsBoard's REST calls on one side, a device on
 * Eclipse Paho speaking ThingsBoard's device API on the other, a real server and Cassandra between
 * them.
 */
class DeviceRpcIT extends RestTestBase {

  private static final int MAX_PERSISTENT = 5;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of("fieldline.rpc.max-persistent-per-device", MAX_PERSISTENT);
  }

  private Device device() {
    String name = "rpc-" + UUID.randomUUID();
    return createDevice(name, name);
  }

  private static String echo(String topic, String request) {
    try {
      JsonNode node = JSON.readTree(request);
      return "{\"method\":" + node.get("method") + ",\"echo\":" + node.get("params") + "}";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void twoWayCallAnswersWithTheDevicesResponse() throws Exception {
    Device device = device();
    try (PahoDevice paho =
        new PahoDevice(mqttPort(), device.accessToken(), true).answering(1, DeviceRpcIT::echo)) {
      HttpResponse<String> answer =
          post(
              "/api/rpc/twoway/" + device.id(),
              token,
              "{\"method\":\"getTemperature\",\"params\":{\"unit\":\"C\"},\"timeout\":5000}");

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(json(answer))
          .isEqualTo(JSON.readTree("{\"method\":\"getTemperature\",\"echo\":{\"unit\":\"C\"}}"));
      assertThat(paho.on(PahoDevice.RPC_REQUEST_PREFIX)).hasSize(1);
      assertThat(JSON.readTree(paho.on(PahoDevice.RPC_REQUEST_PREFIX).get(0).payload()))
          .isEqualTo(JSON.readTree("{\"method\":\"getTemperature\",\"params\":{\"unit\":\"C\"}}"));
    }
  }

  @Test
  void legacyPathAndQosZeroSubscriptionWorkToo() throws Exception {
    Device device = device();
    try (PahoDevice paho =
        new PahoDevice(mqttPort(), device.accessToken(), true).answering(0, DeviceRpcIT::echo)) {
      HttpResponse<String> answer =
          post("/api/plugins/rpc/twoway/" + device.id(), token, "{\"method\":\"ping\"}");

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(json(answer).get("echo")).isEqualTo(JSON.readTree("{}"));
      assertThat(paho.on(PahoDevice.RPC_REQUEST_PREFIX)).hasSize(1);
    }
  }

  @Test
  void oneWayCallAnswersOnceDelivered() throws Exception {
    Device device = device();
    try (PahoDevice paho =
        new PahoDevice(mqttPort(), device.accessToken(), true).answering(1, (t, p) -> null)) {
      HttpResponse<String> answer =
          post(
              "/api/rpc/oneway/" + device.id(),
              token,
              "{\"method\":\"setGpio\",\"params\":{\"pin\":4,\"value\":1}}");

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(paho.on(PahoDevice.RPC_REQUEST_PREFIX)).hasSize(1);
    }
  }

  @Test
  void aDeviceThatDoesNotAnswerTimesOutWithThingsBoardsStatuses() throws Exception {
    Device device = device();
    try (PahoDevice paho =
        new PahoDevice(mqttPort(), device.accessToken(), true).answering(1, (t, p) -> null)) {
      assertThat(
              post("/api/rpc/twoway/" + device.id(), token, "{\"method\":\"m\",\"timeout\":500}")
                  .statusCode())
          .isEqualTo(504);
      assertThat(
              post(
                      "/api/plugins/rpc/twoway/" + device.id(),
                      token,
                      "{\"method\":\"m\",\"timeout\":500}")
                  .statusCode())
          .isEqualTo(408);
      assertThat(paho.on(PahoDevice.RPC_REQUEST_PREFIX)).hasSize(2);
    }
  }

  @Test
  void aDeviceThatNeverSubscribedTimesOutAndAnUnknownDeviceIs404() {
    Device device = device();
    assertThat(
            post("/api/rpc/oneway/" + device.id(), token, "{\"method\":\"m\",\"timeout\":300}")
                .statusCode())
        .isEqualTo(504);
    assertThat(
            post("/api/rpc/twoway/" + UUID.randomUUID(), token, "{\"method\":\"m\"}").statusCode())
        .isEqualTo(404);
    assertThat(post("/api/rpc/twoway/" + device.id(), token, "{\"params\":{}}").statusCode())
        .isEqualTo(400);
    assertThat(post("/api/rpc/twoway/" + device.id(), null, "{\"method\":\"m\"}").statusCode())
        .isEqualTo(401);
  }

  @Test
  void aCallWaitsForTheDeviceToSubscribeWithinItsTimeout() throws Exception {
    Device device = device();
    CompletableFuture<HttpResponse<String>> call =
        CompletableFuture.supplyAsync(
            () ->
                post(
                    "/api/rpc/twoway/" + device.id(),
                    token,
                    "{\"method\":\"late\",\"timeout\":10000}"));
    await().atMost(Duration.ofSeconds(5)).until(() -> metric("fieldline_rpc_pending") >= 1);

    try (PahoDevice paho =
        new PahoDevice(mqttPort(), device.accessToken(), true).answering(1, DeviceRpcIT::echo)) {
      HttpResponse<String> answer = call.get();
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(json(answer).get("method").asText()).isEqualTo("late");
      assertThat(paho.on(PahoDevice.RPC_REQUEST_PREFIX)).hasSize(1);
    }
  }

  @Test
  void persistentRequestToAnOfflineDeviceIsDeliveredWhenItConnects() throws Exception {
    Device device = device();
    long expiration = System.currentTimeMillis() + 60_000;
    HttpResponse<String> queued =
        post(
            "/api/rpc/twoway/" + device.id(),
            token,
            "{\"method\":\"reboot\",\"params\":{\"delay\":1},\"persistent\":true,"
                + "\"expirationTime\":"
                + expiration
                + ",\"additionalInfo\":{\"ticket\":7}}");
    assertThat(queued.statusCode()).isEqualTo(200);
    String rpcId = json(queued).get("rpcId").asText();
    JsonNode stored = json(get("/api/rpc/persistent/" + rpcId, token));
    assertThat(stored.get("status").asText()).isEqualTo("QUEUED");
    assertThat(stored.at("/request/body/method").asText()).isEqualTo("reboot");
    assertThat(stored.get("additionalInfo")).isEqualTo(JSON.readTree("{\"ticket\":7}"));

    try (PahoDevice paho =
        new PahoDevice(mqttPort(), device.accessToken(), true)
            .answering(1, (t, p) -> "{\"rebooting\":true}")) {
      awaitStatus(rpcId, "SUCCESSFUL");
      assertThat(json(get("/api/rpc/persistent/" + rpcId, token)).get("response"))
          .isEqualTo(JSON.readTree("{\"rebooting\":true}"));
      assertThat(paho.on(PahoDevice.RPC_REQUEST_PREFIX)).hasSize(1);
    }

    JsonNode page =
        json(
            get(
                "/api/rpc/persistent/device/"
                    + device.id()
                    + "?pageSize=10&page=0&rpcStatus=SUCCESSFUL",
                token));
    assertThat(page.get("totalElements").asLong()).isEqualTo(1);
    assertThat(page.at("/data/0/id/id").asText()).isEqualTo(rpcId);
    assertThat(
            json(get(
                    "/api/rpc/persistent/device/"
                        + device.id()
                        + "?pageSize=10&page=0&rpcStatus=QUEUED",
                    token))
                .get("totalElements")
                .asLong())
        .isZero();

    assertThat(delete("/api/rpc/persistent/" + rpcId).statusCode()).isEqualTo(200);
    assertThat(get("/api/rpc/persistent/" + rpcId, token).statusCode()).isEqualTo(404);
  }

  @Test
  void persistentRequestSurvivesARestartOfTheServerThatTookIt() throws Exception {
    Device device = device();
    String rpcId =
        json(post(
                "/api/rpc/oneway/" + device.id(),
                token,
                "{\"method\":\"setConfig\",\"persistent\":true,\"expirationTime\":"
                    + (System.currentTimeMillis() + 120_000)
                    + "}"))
            .get("rpcId")
            .asText();

    server.close();
    server = FieldlineServer.start(config(Files.createTempDirectory("fieldline-it-restart-")));
    login();

    try (PahoDevice paho =
        new PahoDevice(mqttPort(), device.accessToken(), true).answering(1, (t, p) -> null)) {
      awaitStatus(rpcId, "SUCCESSFUL");
      assertThat(
              JSON.readTree(paho.on(PahoDevice.RPC_REQUEST_PREFIX).get(0).payload())
                  .get("method")
                  .asText())
          .isEqualTo("setConfig");
    }
  }

  @Test
  void clientSideRpcIsAnsweredAndAnUnknownMethodGetsAnError() throws Exception {
    Device device = device();
    try (PahoDevice paho = new PahoDevice(mqttPort(), device.accessToken(), true)) {
      paho.subscribe("v1/devices/me/rpc/response/+", 1);
      long before = System.currentTimeMillis();
      paho.publish("v1/devices/me/rpc/request/1", "{\"method\":\"getCurrentTime\",\"params\":{}}");
      paho.publish("v1/devices/me/rpc/request/2", "{\"method\":\"getWeather\",\"params\":{}}");

      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> paho.on("v1/devices/me/rpc/response/").size() == 2);
      JsonNode time = JSON.readTree(paho.on("v1/devices/me/rpc/response/1").get(0).payload());
      assertThat(time.get("currentTime").asLong()).isGreaterThanOrEqualTo(before);
      JsonNode error = JSON.readTree(paho.on("v1/devices/me/rpc/response/2").get(0).payload());
      assertThat(error.get("error").asText()).contains("getWeather");
    }
  }

  @Test
  void persistentRequestsBeyondTheDeviceBoundAnswer429AndIllTypedFields400() throws Exception {
    Bystander bystander = new Bystander(this, "rpc-bound-bystander");
    bystander.connect();
    Device device = device();
    String body = "{\"method\":\"setGpio\",\"params\":{\"pin\":1},\"persistent\":true}";
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < MAX_PERSISTENT; i++) {
      ids.add(ok(post("/api/rpc/oneway/" + device.id(), token, body)).get("rpcId").asText());
    }
    bystander.publishesAndAllStored();

    HttpResponse<String> over = post("/api/rpc/oneway/" + device.id(), token, body);
    assertError(over, 429);
    assertThat(json(over).get("message").asText())
        .contains("already has " + MAX_PERSISTENT + " persistent RPC requests")
        .doesNotContain("Exception");
    assertThat(metric("fieldline_rpc_persistent_refused_total")).isGreaterThanOrEqualTo(1);
    // An ended request frees its place.
    assertThat(delete("/api/rpc/persistent/" + ids.get(0)).statusCode()).isEqualTo(200);
    assertThat(post("/api/rpc/oneway/" + device.id(), token, body).statusCode()).isEqualTo(200);

    // ThingsBoard's "persistent" is a JSON boolean: "yes" is refused, not a lightweight call.
    for (String bad :
        List.of(
            "{\"method\":\"m\",\"persistent\":\"yes\"}",
            "{\"method\":\"m\",\"persistent\":1}",
            "{\"method\":\"m\",\"persistent\":true,\"retries\":1.5}",
            "{\"method\":\"m\",\"persistent\":true,\"retries\":\"2\"}",
            "{\"method\":\"m\",\"timeout\":\"5000\"}",
            "{\"method\":7}")) {
      HttpResponse<String> refused = post("/api/rpc/twoway/" + device.id(), token, bad);
      assertThat(refused.statusCode()).as(bad).isEqualTo(400);
      assertThat(json(refused).get("message").asText()).as(bad).doesNotContain("Exception");
    }
    assertThat(
            json(post(
                    "/api/rpc/twoway/" + device.id(),
                    token,
                    "{\"method\":\"m\",\"persistent\":\"yes\"}"))
                .get("message")
                .asText())
        .isEqualTo("\"persistent\" must be true or false");
    bystander.publishesAndAllStored();
    bystander.disconnect();
  }

  private void awaitStatus(String rpcId, String status) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> json(get("/api/rpc/persistent/" + rpcId)).get("status").asText().equals(status));
  }
}
