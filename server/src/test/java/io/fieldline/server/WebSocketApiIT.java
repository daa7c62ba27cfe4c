package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.device.Device;
import java.net.URI;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's WebSocket telemetry API against a real server, driven by Java-WebSocket (a client
 * we did not write) while HiveMQ devices publish over MQTT and the administrator writes attributes
 * over REST: every command type of both paths, first updates with the current values, live updates
 * only after the data is stored, unsubscribe, and the answers to bad tokens and bad commands.
 */
class WebSocketApiIT extends RestTestBase {

  private static final String TELEMETRY = "v1/devices/me/telemetry";

  private WsTestClient authenticated() {
    WsTestClient ws = WsTestClient.open(wsUri("/api/ws"));
    assertThat(ws.isOpen()).isTrue();
    ws.send("{\"authCmd\":{\"cmdId\":0,\"token\":\"" + token + "\"}}");
    return ws;
  }

  private URI wsUri(String path) {
    return URI.create("ws://127.0.0.1:" + server.httpPort() + path);
  }

  private Device device(String prefix) {
    return createDevice(prefix + "-" + UUID.randomUUID(), prefix + "-token-" + UUID.randomUUID());
  }

  private static String points(long ts, String values) {
    return "{\"ts\":" + ts + ",\"values\":" + values + "}";
  }

  /** The string value of the only point of {@code key} in an update. */
  private static String only(JsonNode update, String key) {
    JsonNode values = update.path("data").path(key);
    assertThat(values.size()).as("points of %s in %s", key, update).isEqualTo(1);
    return values.get(0).get(1).asText();
  }

  @Test
  void should_send_the_latest_values_first_and_then_each_stored_value_when_latest_is_subscribed() {
    Device device = device("latest");
    Mqtt3BlockingClient mqtt = connectedDevice(device);
    long t0 = System.currentTimeMillis() - 10_000;
    publish(mqtt, TELEMETRY, points(t0, "{\"temperature\":21.5,\"on\":true}"));

    try (WsTestClient ws = authenticated()) {
      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":7,\"entityType\":\"DEVICE\",\"entityId\":\""
              + device.id()
              + "\",\"scope\":\"LATEST_TELEMETRY\"}]}");
      JsonNode first = ws.next(7);
      assertThat(first.path("errorCode").asInt()).isZero();
      assertThat(first.path("errorMsg").isNull()).isTrue();
      assertThat(first.path("data").path("temperature").get(0).get(0).asLong()).isEqualTo(t0);
      assertThat(only(first, "temperature")).isEqualTo("21.5");
      assertThat(only(first, "on")).isEqualTo("true");
      assertThat(first.path("latestValues").path("temperature").asLong()).isEqualTo(t0);

      // The PUBACK comes after the write, and the update is sent once the write completed.
      publish(mqtt, TELEMETRY, points(t0 + 1, "{\"temperature\":22}"));
      JsonNode live = ws.next(7);
      assertThat(only(live, "temperature")).isEqualTo("22");
      assertThat(live.path("data").has("on")).as("only what was stored").isFalse();

      // An older value of a key is not sent after a newer one.
      publish(mqtt, TELEMETRY, points(t0 - 5_000, "{\"temperature\":1}"));
      publish(mqtt, TELEMETRY, points(t0 + 2, "{\"temperature\":23}"));
      assertThat(only(ws.next(7), "temperature")).isEqualTo("23");
    } finally {
      mqtt.disconnect();
    }
  }

  @Test
  void should_send_the_window_in_order_then_live_points_when_a_time_window_is_subscribed() {
    Device device = device("window");
    Mqtt3BlockingClient mqtt = connectedDevice(device);
    long now = System.currentTimeMillis();
    publish(mqtt, TELEMETRY, points(now - 3_000, "{\"t\":3,\"other\":9}"));
    publish(mqtt, TELEMETRY, points(now - 2_000, "{\"t\":2}"));
    publish(mqtt, TELEMETRY, points(now - 120_000, "{\"t\":120}")); // outside the window

    try (WsTestClient ws = authenticated()) {
      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":3,\"entityType\":\"DEVICE\",\"entityId\":\""
              + device.id()
              + "\",\"keys\":\"t\",\"startTs\":"
              + (now - 60_000)
              + ",\"timeWindow\":120000,\"interval\":1000,\"limit\":100,\"agg\":\"NONE\"}]}");
      JsonNode history = ws.next(3);
      JsonNode t = history.path("data").path("t");
      assertThat(t.size()).isEqualTo(2);
      assertThat(t.get(0).get(1).asText()).isEqualTo("3");
      assertThat(t.get(1).get(1).asText()).isEqualTo("2");
      assertThat(history.path("data").has("other")).as("only the keys asked for").isFalse();

      publish(mqtt, TELEMETRY, points(now, "{\"t\":1,\"other\":8}"));
      JsonNode live = ws.next(3);
      assertThat(only(live, "t")).isEqualTo("1");
      assertThat(live.path("data").has("other")).isFalse();
    } finally {
      mqtt.disconnect();
    }
  }

  @Test
  void should_answer_once_with_aggregated_buckets_when_history_is_asked() {
    Device device = device("history");
    Mqtt3BlockingClient mqtt = connectedDevice(device);
    long start = 1_700_000_000_000L;
    publish(mqtt, TELEMETRY, points(start + 100, "{\"h\":10}"));
    publish(mqtt, TELEMETRY, points(start + 200, "{\"h\":20}"));
    publish(mqtt, TELEMETRY, points(start + 60_100, "{\"h\":40}"));
    mqtt.disconnect();

    try (WsTestClient ws = authenticated()) {
      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES_HISTORY\",\"cmdId\":4,\"entityType\":\"DEVICE\","
              + "\"entityId\":\""
              + device.id()
              + "\",\"keys\":\"h\",\"startTs\":"
              + start
              + ",\"endTs\":"
              + (start + 120_000)
              + ",\"interval\":60000,\"agg\":\"AVG\"}]}");
      JsonNode buckets = ws.next(4).path("data").path("h");
      assertThat(buckets.size()).isEqualTo(2);
      assertThat(buckets.get(0).get(0).asLong()).isEqualTo(start + 30_000);
      assertThat(Double.parseDouble(buckets.get(0).get(1).asText())).isEqualTo(15.0);
      assertThat(Double.parseDouble(buckets.get(1).get(1).asText())).isEqualTo(40.0);
    }
  }

  @Test
  void should_send_attribute_changes_of_the_scope_asked_for_from_rest_and_from_the_device() {
    Device device = device("attrs");
    ok(
        post(
            "/api/plugins/telemetry/DEVICE/" + device.id() + "/SHARED_SCOPE",
            "{\"mode\":\"eco\"}"));
    Mqtt3BlockingClient mqtt = connectedDevice(device);

    try (WsTestClient ws = authenticated()) {
      ws.send(
          "{\"cmds\":[{\"type\":\"ATTRIBUTES\",\"cmdId\":1,\"entityType\":\"DEVICE\",\"entityId\":\""
              + device.id()
              + "\",\"scope\":\"SHARED_SCOPE\"},"
              + "{\"type\":\"ATTRIBUTES\",\"cmdId\":2,\"entityType\":\"DEVICE\",\"entityId\":\""
              + device.id()
              + "\",\"scope\":\"CLIENT_SCOPE\"}]}");
      assertThat(only(ws.next(1), "mode")).isEqualTo("eco");
      assertThat(ws.next(2).path("data").size()).as("no client attributes yet").isZero();

      ok(
          post(
              "/api/plugins/telemetry/DEVICE/" + device.id() + "/SHARED_SCOPE",
              "{\"mode\":\"boost\"}"));
      assertThat(only(ws.next(1), "mode")).isEqualTo("boost");

      publish(mqtt, "v1/devices/me/attributes", "{\"firmware\":\"1.2.3\"}");
      assertThat(only(ws.next(2), "firmware")).isEqualTo("1.2.3");
      assertThat(ws.pending()).as("nothing for the other scope").isEmpty();
    } finally {
      mqtt.disconnect();
    }
  }

  @Test
  void should_send_nothing_more_to_a_subscription_when_it_is_unsubscribed() {
    Device device = device("unsub");
    Mqtt3BlockingClient mqtt = connectedDevice(device);
    String id = device.id().toString();

    try (WsTestClient ws = authenticated()) {
      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"entityId\":\""
              + id
              + "\",\"keys\":\"a\"},{\"type\":\"TIMESERIES\",\"cmdId\":2,\"entityId\":\""
              + id
              + "\",\"keys\":\"a\"}]}");
      ws.next(1);
      ws.next(2);
      ws.send("{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"unsubscribe\":true}]}");
      // Subscription 2 is the fence: once it has the value, 1 would have had it too.
      awaitUnsubscribed(ws, mqtt);
      assertThat(ws.pending()).as("nothing for the unsubscribed id").isEmpty();
    } finally {
      mqtt.disconnect();
    }
  }

  // The unsubscribe is handled before any later message of the same session; the value published
  // after the fence update of a first probe proves the order.
  private void awaitUnsubscribed(WsTestClient ws, Mqtt3BlockingClient mqtt) {
    ws.send(
        "{\"cmds\":[{\"type\":\"TIMESERIES_HISTORY\",\"cmdId\":9,\"entityId\":\""
            + UUID.randomUUID()
            + "\",\"keys\":\"a\"}]}");
    assertThat(ws.next(9).path("errorCode").asInt()).as("the probe's answer").isEqualTo(2);
    publish(mqtt, TELEMETRY, "{\"a\":5}");
    assertThat(only(ws.next(2), "a")).isEqualTo("5");
  }

  @Test
  void should_serve_every_legacy_command_array_when_the_token_is_in_the_query() {
    Device device = device("legacy");
    ok(post("/api/plugins/telemetry/DEVICE/" + device.id() + "/SERVER_SCOPE", "{\"zone\":\"A\"}"));
    Mqtt3BlockingClient mqtt = connectedDevice(device);
    long t0 = 1_700_000_000_000L;
    publish(mqtt, TELEMETRY, points(t0, "{\"x\":1}"));

    try (WsTestClient ws = WsTestClient.open(wsUri("/api/ws/plugins/telemetry?token=" + token))) {
      String id = device.id().toString();
      ws.send(
          "{\"tsSubCmds\":[{\"cmdId\":10,\"entityType\":\"DEVICE\",\"entityId\":\""
              + id
              + "\",\"keys\":\"x\",\"scope\":\"LATEST_TELEMETRY\"}],"
              + "\"historyCmds\":[{\"cmdId\":11,\"entityType\":\"DEVICE\",\"entityId\":\""
              + id
              + "\",\"keys\":\"x\",\"startTs\":"
              + (t0 - 1)
              + ",\"endTs\":"
              + (t0 + 1)
              + ",\"agg\":\"NONE\",\"limit\":10}],"
              + "\"attrSubCmds\":[{\"cmdId\":12,\"entityType\":\"DEVICE\",\"entityId\":\""
              + id
              + "\",\"scope\":\"SERVER_SCOPE\"}]}");
      assertThat(only(ws.next(10), "x")).isEqualTo("1");
      assertThat(only(ws.next(11), "x")).isEqualTo("1");
      assertThat(only(ws.next(12), "zone")).isEqualTo("A");

      publish(mqtt, TELEMETRY, points(t0 + 1, "{\"x\":2}"));
      assertThat(only(ws.next(10), "x")).isEqualTo("2");
    } finally {
      mqtt.disconnect();
    }
  }

  @Test
  void should_refuse_the_upgrade_with_401_when_the_legacy_token_is_bad() {
    WsTestClient ws = WsTestClient.open(wsUri("/api/ws/plugins/telemetry?token=not-a-jwt"));
    assertThat(ws.isOpen()).isFalse();
    assertThat(ws.awaitClosed()).isTrue();
    assertThat(ws.closeReason()).contains("401");
  }

  @Test
  void should_answer_unauthorized_and_close_without_data_when_the_auth_token_is_bad() {
    Device device = device("badtoken");
    WsTestClient ws = WsTestClient.open(wsUri("/api/ws"));
    ws.send(
        "{\"authCmd\":{\"cmdId\":0,\"token\":\""
            + token.substring(0, token.length() - 2)
            + "xx\"},\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"entityId\":\""
            + device.id()
            + "\"}]}");
    JsonNode answer = ws.nextAny();
    assertThat(answer.path("errorCode").asInt()).isEqualTo(3);
    assertThat(answer.path("data").isNull()).isTrue();
    assertThat(ws.awaitClosed()).isTrue();
    assertThat(ws.pending()).isEmpty();

    WsTestClient silent = WsTestClient.open(wsUri("/api/ws"));
    silent.send(
        "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"entityId\":\"" + device.id() + "\"}]}");
    assertThat(silent.nextAny().path("errorCode").asInt())
        .as("a command before authCmd")
        .isEqualTo(3);
    assertThat(silent.awaitClosed()).isTrue();
  }

  @Test
  void should_answer_bad_request_and_keep_serving_the_session_when_a_command_is_bad() {
    Device device = device("badcmd");
    try (WsTestClient ws = authenticated()) {
      ws.send("{not json");
      assertThat(ws.nextAny().path("errorCode").asInt()).isEqualTo(2);

      ws.send("{\"cmds\":[{\"type\":\"ENTITY_DATA\",\"cmdId\":5}]}");
      JsonNode unsupported = ws.next(5);
      assertThat(unsupported.path("errorCode").asInt()).isEqualTo(2);
      assertThat(unsupported.path("errorMsg").asText()).contains("ENTITY_DATA");

      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":6,\"entityId\":\""
              + UUID.randomUUID()
              + "\"}]}");
      assertThat(ws.next(6).path("errorMsg").asText()).contains("not found");

      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":8,\"entityType\":\"ASSET\",\"entityId\":\""
              + device.id()
              + "\"}]}");
      assertThat(ws.next(8).path("errorCode").asInt()).isEqualTo(2);

      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES_HISTORY\",\"cmdId\":12,\"entityId\":\""
              + device.id()
              + "\",\"keys\":\"k\",\"startTs\":0,\"endTs\":100000000,\"interval\":1,\"agg\":\"AVG\"}]}");
      assertThat(ws.next(12).path("errorMsg").asText()).contains("too many intervals");

      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":13,\"entityId\":\""
              + device.id()
              + "\",\"keys\":\"k\"}]}");
      JsonNode served = ws.next(13);
      assertThat(served.path("errorCode").asInt()).as("the session still serves").isZero();
      assertThat(served.path("data").path("k").size()).as("a key without values").isZero();
      assertThat(ws.isOpen()).isTrue();
    }
    assertThat(metric("fieldline_ws_commands_rejected_total")).isGreaterThanOrEqualTo(5);
  }
}
