package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.device.Device;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The WebSocket API's bounds, each small here: subscriptions per session, sessions per user, the
 * time to authenticate, idle sessions, and a client that stops reading its socket (the server's
 * socket send buffer is tiny, so the per-session queue is what fills). The server keeps serving
 * everyone else through each.
 */
class WebSocketLimitsIT extends RestTestBase {

  private static final int MAX_QUEUED = 30;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.ws.max-subscriptions-per-session",
        2,
        "fieldline.ws.max-sessions-per-user",
        3,
        "fieldline.ws.max-queued-updates",
        MAX_QUEUED,
        "fieldline.ws.auth-timeout",
        "1 s",
        "fieldline.ws.idle-timeout",
        "6 s",
        "pekko.http.server.socket-options.so-send-buffer-size",
        "4 KiB");
  }

  private WsTestClient authenticated() {
    WsTestClient ws =
        WsTestClient.open(URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws"));
    ws.send("{\"authCmd\":{\"cmdId\":0,\"token\":\"" + token + "\"}}");
    return ws;
  }

  private Device device() {
    return createDevice("limits-" + UUID.randomUUID(), "limits-" + UUID.randomUUID());
  }

  private static String subscribe(int cmdId, Device device) {
    return "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":"
        + cmdId
        + ",\"entityType\":\"DEVICE\",\"entityId\":\""
        + device.id()
        + "\",\"scope\":\"LATEST_TELEMETRY\"}]}";
  }

  @Test
  void should_refuse_one_more_subscription_and_keep_the_session_when_the_session_is_full() {
    Device device = device();
    try (WsTestClient ws = authenticated()) {
      ws.send(subscribe(1, device));
      ws.send(subscribe(2, device));
      ws.send(subscribe(3, device));
      assertThat(ws.next(1).path("errorCode").asInt()).isZero();
      assertThat(ws.next(2).path("errorCode").asInt()).isZero();
      JsonNode refused = ws.next(3);
      assertThat(refused.path("errorCode").asInt()).isEqualTo(2);
      assertThat(refused.path("errorMsg").asText()).contains("Too many subscriptions");

      ws.send("{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"unsubscribe\":true}]}");
      ws.send(subscribe(3, device));
      assertThat(ws.next(3).path("errorCode").asInt()).as("room again").isZero();
    }
  }

  @Test
  void should_close_one_more_session_of_a_user_and_admit_it_once_one_closed() {
    Device device = device();
    List<WsTestClient> open = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        WsTestClient ws = authenticated();
        ws.send(subscribe(1, device));
        assertThat(ws.next(1).path("errorCode").asInt()).isZero();
        open.add(ws);
      }
      WsTestClient fourth = authenticated();
      JsonNode refused = fourth.nextAny();
      assertThat(refused.path("errorCode").asInt()).isEqualTo(2);
      assertThat(refused.path("errorMsg").asText()).contains("Too many sessions");
      assertThat(fourth.awaitClosed()).isTrue();

      open.remove(0).close();
      await("a slot freed")
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                try (WsTestClient again = authenticated()) {
                  again.send(subscribe(1, device));
                  assertThat(again.next(1).path("errorCode").asInt()).isZero();
                }
              });
    } finally {
      open.forEach(WsTestClient::close);
    }
  }

  @Test
  void should_close_a_session_when_it_does_not_authenticate_in_time() {
    WsTestClient ws =
        WsTestClient.open(URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws"));
    JsonNode told = ws.nextAny();
    assertThat(told.path("errorCode").asInt()).isEqualTo(3);
    assertThat(told.path("errorMsg").asText()).contains("authCmd");
    assertThat(ws.awaitClosed()).isTrue();
    assertThat(metric("fieldline_ws_sessions_closed_total{reason=\"auth_timeout\""))
        .isGreaterThanOrEqualTo(1);
  }

  @Test
  void should_close_a_session_when_it_sends_nothing_for_the_idle_timeout() {
    WsTestClient ws = authenticated();
    assertThat(ws.awaitClosed()).isTrue();
    assertThat(metric("fieldline_ws_sessions_closed_total{reason=\"idle\""))
        .isGreaterThanOrEqualTo(1);
  }

  @Test
  void should_disconnect_a_client_that_stopped_reading_and_keep_serving_the_others() {
    Device device = device();
    WsTestClient slow = authenticated();
    slow.send(subscribe(1, device));
    slow.next(1);
    try (WsTestClient reader = authenticated()) {
      // The reader asks for the small key only: it must keep up through the tiny send buffer.
      reader.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"entityId\":\""
              + device.id()
              + "\",\"keys\":\"n\"}]}");
      reader.next(1);
      slow.stopReading();
      double slowBefore = metric("fieldline_ws_sessions_closed_total{reason=\"slow\"");

      Mqtt3BlockingClient mqtt = connectedDevice(device);
      // 1.2 MB for the client that stopped reading: more than its socket buffers and its queue.
      String big = "x".repeat(4_000);
      int messages = 300;
      for (int i = 0; i < messages; i++) {
        publish(mqtt, "v1/devices/me/telemetry", "{\"n\":" + i + ",\"blob\":\"" + big + "\"}");
      }
      mqtt.disconnect();

      await("the slow client dropped")
          .atMost(Duration.ofSeconds(20))
          .until(() -> metric("fieldline_ws_sessions_closed_total{reason=\"slow\"") > slowBefore);
      // The reading client got everything, up to the last value.
      // The reading client got the last value (each update carries the newest n).
      String last = "";
      while (!last.equals(String.valueOf(messages - 1))) {
        last = reader.next(1).path("data").path("n").get(0).get(1).asText();
      }
      assertThat(reader.isOpen()).isTrue();
      slow.resumeReading();
      assertThat(slow.awaitClosed()).as("the slow client's socket was closed").isTrue();
    } finally {
      slow.close();
    }
  }
}
