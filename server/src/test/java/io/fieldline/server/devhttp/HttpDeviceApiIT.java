package io.fieldline.server.devhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.device.Device;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's HTTP device API end to end, called with the JDK's HTTP client: a real server, a
 * real Cassandra, the administrator's REST calls on the other side (shared attributes, server-side
 * RPC). The class lowers the client-side RPC rate and the long polls per device so that their
 * refusals are reachable.
 */
class HttpDeviceApiIT extends DeviceApiTestBase {

  private static final String POLLS = "fieldline_http_device_polls ";
  private static final String ANNOUNCED = "fieldline_http_device_rpc_announced_total";
  private static final String UNKNOWN_REPLY =
      "fieldline_http_device_rpc_total{outcome=\"unknown_reply\"";

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.mqtt.client-rpc-rate", 1,
        "fieldline.mqtt.client-rpc-burst", 5,
        "fieldline.http-device.max-polls-per-device", 2);
  }

  private static String api(Device device, String resource) {
    return "/api/v1/" + device.accessToken() + "/" + resource;
  }

  @Test
  void should_have_stored_every_value_when_telemetry_is_answered_200() {
    Device device = device();

    HttpResponse<String> plain =
        devicePost(api(device, "telemetry"), "{\"temperature\":21.5,\"humidity\":40}");
    // Read right after the answer, without waiting: the 200 is the PUBACK's promise.
    long afterFirst = rows(device.id());
    HttpResponse<String> timestamped =
        devicePost(
            api(device, "telemetry"),
            "[{\"ts\":1700000000000,\"values\":{\"temperature\":20}},"
                + "{\"ts\":1700000001000,\"values\":{\"temperature\":20.5}}]");
    long afterSecond = rows(device.id());

    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(timestamped.statusCode()).isEqualTo(200);
    assertThat(afterFirst).isEqualTo(2);
    assertThat(afterSecond).isEqualTo(4);
    JsonNode latest =
        json(
            adminGet(
                "/api/plugins/telemetry/DEVICE/"
                    + device.id()
                    + "/values/timeseries?keys=humidity,temperature"));
    assertThat(latest.get("humidity").get(0).get("value").asText()).isEqualTo("40");
  }

  @Test
  void should_answer_by_scope_and_key_when_a_device_reads_its_attributes() {
    Device device = device();
    assertThat(
            devicePost(api(device, "attributes"), "{\"firmware\":\"v1.2\",\"serial\":\"A-1\"}")
                .statusCode())
        .isEqualTo(200);
    assertThat(
            send(admin(
                    "/api/plugins/telemetry/DEVICE/" + device.id() + "/attributes/SHARED_SCOPE",
                    "{\"mode\":\"eco\",\"targetTemp\":21}"))
                .statusCode())
        .isEqualTo(200);

    HttpResponse<String> both =
        deviceGet(api(device, "attributes?clientKeys=firmware&sharedKeys=mode,unknown"));
    HttpResponse<String> everything = deviceGet(api(device, "attributes"));
    HttpResponse<String> clientOnly = deviceGet(api(device, "attributes?clientKeys=serial"));

    assertThat(both.statusCode()).isEqualTo(200);
    assertThat(json(both))
        .isEqualTo(json("{\"client\":{\"firmware\":\"v1.2\"},\"shared\":{\"mode\":\"eco\"}}"));
    assertThat(json(everything))
        .isEqualTo(
            json(
                "{\"client\":{\"firmware\":\"v1.2\",\"serial\":\"A-1\"},"
                    + "\"shared\":{\"mode\":\"eco\",\"targetTemp\":21}}"));
    assertThat(json(clientOnly)).isEqualTo(json("{\"client\":{\"serial\":\"A-1\"}}"));
  }

  @Test
  void should_answer_the_poll_with_the_update_when_a_shared_attribute_is_set_over_rest()
      throws Exception {
    Device device = device();
    CompletableFuture<HttpResponse<String>> poll =
        deviceGetAsync(api(device, "attributes/updates?timeout=20000"));
    await().atMost(Duration.ofSeconds(10)).until(() -> metric(POLLS) == 1);

    HttpResponse<String> set =
        send(
            admin(
                "/api/plugins/telemetry/DEVICE/" + device.id() + "/attributes/SHARED_SCOPE",
                "{\"targetTemp\":22.5,\"config\":{\"period\":30}}"));

    assertThat(set.statusCode()).isEqualTo(200);
    HttpResponse<String> update = poll.get(10, TimeUnit.SECONDS);
    assertThat(update.statusCode()).isEqualTo(200);
    assertThat(json(update)).isEqualTo(json("{\"targetTemp\":22.5,\"config\":{\"period\":30}}"));
    await().atMost(Duration.ofSeconds(5)).until(() -> metric(POLLS) == 0);
  }

  @Test
  void should_answer_408_when_nothing_comes_within_the_polls_timeout() {
    Device device = device();
    long start = System.nanoTime();

    HttpResponse<String> attributes = deviceGet(api(device, "attributes/updates?timeout=300"));
    HttpResponse<String> rpc = deviceGet(api(device, "rpc?timeout=300"));

    assertThat(attributes.statusCode()).isEqualTo(408);
    assertThat(rpc.statusCode()).isEqualTo(408);
    // 300 ms is below fieldline.http-device.min-poll-timeout: each poll waited 1 s.
    assertThat(json(rpc).get("message").asText()).endsWith("within 1000 ms");
    assertThat(System.nanoTime() - start)
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(2000));
    assertThat(deviceGet(api(device, "rpc?timeout=-1")).statusCode()).isEqualTo(400);
    assertThat(deviceGet(api(device, "rpc?timeout=soon")).statusCode()).isEqualTo(400);
  }

  @Test
  void should_answer_the_rest_caller_with_the_devices_reply_when_a_polling_device_gets_a_call()
      throws Exception {
    Device device = device();
    double unknownBefore = metric(UNKNOWN_REPLY);
    CompletableFuture<HttpResponse<String>> poll = deviceGetAsync(api(device, "rpc?timeout=20000"));
    await().atMost(Duration.ofSeconds(10)).until(() -> metric(POLLS) == 1);
    CompletableFuture<HttpResponse<String>> call =
        http.sendAsync(
            admin(
                    "/api/rpc/twoway/" + device.id(),
                    "{\"method\":\"getTemperature\",\"params\":{\"unit\":\"C\"},\"timeout\":10000}")
                .build(),
            HttpResponse.BodyHandlers.ofString());

    HttpResponse<String> request = poll.get(10, TimeUnit.SECONDS);
    assertThat(request.statusCode()).isEqualTo(200);
    JsonNode rpc = json(request);
    assertThat(rpc.get("method").asText()).isEqualTo("getTemperature");
    assertThat(rpc.get("params")).isEqualTo(json("{\"unit\":\"C\"}"));
    assertThat(rpc.get("id").isInt()).isTrue();
    assertThat(call).isNotDone();

    HttpResponse<String> reply =
        devicePost(api(device, "rpc/" + rpc.get("id").asInt()), "{\"temperature\":21.5}");

    assertThat(reply.statusCode()).isEqualTo(200);
    HttpResponse<String> answer = call.get(10, TimeUnit.SECONDS);
    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(json(answer)).isEqualTo(json("{\"temperature\":21.5}"));
    // A second reply to the same request reaches nothing; it is answered all the same.
    assertThat(devicePost(api(device, "rpc/" + rpc.get("id").asInt()), "{}").statusCode())
        .isEqualTo(200);
    assertThat(metric(UNKNOWN_REPLY) - unknownBefore).isEqualTo(1);
  }

  @Test
  void should_hand_a_waiting_call_to_the_next_poll_when_the_device_was_not_polling()
      throws Exception {
    Device device = device();
    CompletableFuture<HttpResponse<String>> call =
        http.sendAsync(
            admin(
                    "/api/rpc/oneway/" + device.id(),
                    "{\"method\":\"setGpio\",\"params\":{\"pin\":4},\"timeout\":10000}")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    await().atMost(Duration.ofSeconds(10)).until(() -> metric("fieldline_rpc_pending ") == 1);
    assertThat(call).isNotDone();

    HttpResponse<String> request = deviceGet(api(device, "rpc?timeout=10000"));

    assertThat(request.statusCode()).isEqualTo(200);
    assertThat(json(request).get("method").asText()).isEqualTo("setGpio");
    // One-way: answered once the request is handed over.
    assertThat(call.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    // A device that never polls: the call ends at its timeout, as for an unsubscribed MQTT device.
    assertThat(
            send(admin("/api/rpc/twoway/" + device.id(), "{\"method\":\"m\",\"timeout\":300}"))
                .statusCode())
        .isEqualTo(504);
  }

  @Test
  void should_answer_401_when_the_access_token_is_unknown() {
    String unknown = "/api/v1/no-such-token/";

    assertThat(devicePost(unknown + "telemetry", "{\"t\":1}").statusCode()).isEqualTo(401);
    assertThat(devicePost(unknown + "attributes", "{\"a\":1}").statusCode()).isEqualTo(401);
    assertThat(deviceGet(unknown + "attributes").statusCode()).isEqualTo(401);
    assertThat(deviceGet(unknown + "rpc?timeout=100").statusCode()).isEqualTo(401);
    assertThat(devicePost(unknown + "rpc", "{\"method\":\"getCurrentTime\"}").statusCode())
        .isEqualTo(401);
    assertThat(devicePost(unknown + "rpc/1", "{}").statusCode()).isEqualTo(401);
    assertThat(metric("fieldline_http_device_rejected_total{reason=\"unknown_token\""))
        .isGreaterThanOrEqualTo(6);
  }

  @Test
  void should_answer_400_and_keep_a_dead_letter_when_the_payload_is_invalid() {
    Device device = device();

    HttpResponse<String> telemetry = devicePost(api(device, "telemetry"), "{\"t\":21.5");
    HttpResponse<String> attributes = devicePost(api(device, "attributes"), "[1,2]");

    assertThat(telemetry.statusCode()).isEqualTo(400);
    assertThat(json(telemetry).get("message").asText())
        .startsWith("invalid payload: not valid JSON");
    assertThat(attributes.statusCode()).isEqualTo(400);
    assertThat(json(attributes).get("message").asText())
        .isEqualTo("invalid payload: attributes must be a JSON object");
    assertThat(rows(device.id())).isZero();
    JsonNode letters = json(adminGet("/api/fieldline/deadletters/DEVICE/" + device.id()));
    List<String> topics = new ArrayList<>();
    letters.forEach(letter -> topics.add(letter.get("topic").asText()));
    assertThat(topics)
        .containsExactlyInAnyOrder("/api/v1/{token}/telemetry", "/api/v1/{token}/attributes");
    assertThat(letters.toString()).doesNotContain(device.accessToken());
  }

  @Test
  void should_answer_413_when_the_body_exceeds_the_mqtt_packet_limit() {
    Device device = device();
    StringBuilder big = new StringBuilder("{\"blob\":\"");
    while (big.length() < 65_536) {
      big.append('x');
    }
    big.append("\"}");

    HttpResponse<String> response = devicePost(api(device, "telemetry"), big.toString());

    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(rows(device.id())).isZero();
    assertThat(metric("fieldline_http_device_rejected_total{reason=\"too_large\""))
        .isGreaterThanOrEqualTo(1);
  }

  @Test
  void should_answer_like_the_mqtt_transport_when_a_device_calls_client_side_rpc() {
    Device device = device();
    long before = System.currentTimeMillis();

    HttpResponse<String> time =
        devicePost(api(device, "rpc"), "{\"method\":\"getCurrentTime\",\"params\":{}}");
    HttpResponse<String> unknown = devicePost(api(device, "rpc"), "{\"method\":\"reboot\"}");
    HttpResponse<String> malformed = devicePost(api(device, "rpc"), "[]");

    assertThat(time.statusCode()).isEqualTo(200);
    assertThat(json(time).get("currentTime").asLong())
        .isBetween(before, System.currentTimeMillis());
    assertThat(json(unknown)).isEqualTo(json("{\"error\":\"unsupported method: reboot\"}"));
    assertThat(malformed.statusCode()).isEqualTo(400);
  }

  @Test
  void should_answer_429_with_retry_after_when_a_device_exceeds_its_client_rpc_rate() {
    Device device = device();
    List<Integer> statuses = new ArrayList<>();
    String retryAfter = null;

    // Rate 1/s with a burst of 5: ten calls in a row cannot all fit.
    for (int i = 0; i < 10; i++) {
      HttpResponse<String> response =
          devicePost(api(device, "rpc"), "{\"method\":\"getCurrentTime\"}");
      statuses.add(response.statusCode());
      if (response.statusCode() == 429) {
        retryAfter = response.headers().firstValue("Retry-After").orElse(null);
      }
    }

    assertThat(statuses.subList(0, 5)).containsOnly(200);
    assertThat(statuses).contains(429);
    assertThat(retryAfter).isNotNull();
    assertThat(Long.parseLong(retryAfter)).isPositive();
  }

  @Test
  void should_answer_429_when_a_device_has_as_many_polls_waiting_as_it_may() throws Exception {
    Device device = device();
    CompletableFuture<HttpResponse<String>> first =
        deviceGetAsync(api(device, "attributes/updates?timeout=20000"));
    CompletableFuture<HttpResponse<String>> second =
        deviceGetAsync(api(device, "rpc?timeout=20000"));
    await().atMost(Duration.ofSeconds(10)).until(() -> metric(POLLS) == 2);

    HttpResponse<String> third = deviceGet(api(device, "rpc?timeout=20000"));

    assertThat(third.statusCode()).isEqualTo(429);
    assertThat(third.headers().firstValue("Retry-After")).isPresent();
    // Another device is not limited by this one's polls.
    assertThat(deviceGet(api(device(), "rpc?timeout=1000")).statusCode()).isEqualTo(408);
    send(
        admin(
            "/api/plugins/telemetry/DEVICE/" + device.id() + "/attributes/SHARED_SCOPE",
            "{\"wake\":true}"));
    assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    send(admin("/api/rpc/oneway/" + device.id(), "{\"method\":\"wake\",\"timeout\":5000}"));
    assertThat(second.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void should_answer_405_when_a_resource_is_called_with_another_method() {
    Device device = device();

    HttpResponse<String> put = send(device("PUT", api(device, "telemetry"), "{\"t\":1}"));

    assertThat(put.statusCode()).isEqualTo(405);
    assertThat(json(put).get("status").asInt()).isEqualTo(405);
  }

  @Test
  void should_answer_404_without_reaching_the_rest_api_when_a_device_path_is_unknown() {
    Device device = device();
    double restRejected = metric("fieldline_http_rejected_total");
    double notFound = metric("fieldline_http_device_rejected_total{reason=\"not_found\"");

    HttpResponse<String> claim = devicePost(api(device, "claim"), "{}");
    HttpResponse<String> slash = devicePost(api(device, "telemetry/"), "{\"t\":1}");

    assertThat(claim.statusCode()).isEqualTo(404);
    assertThat(slash.statusCode()).isEqualTo(404);
    assertThat(claim.body()).doesNotContain(device.accessToken());
    // The REST API, whose rejection log names the path, never saw them.
    assertThat(metric("fieldline_http_rejected_total")).isEqualTo(restRejected);
    assertThat(metric("fieldline_http_device_rejected_total{reason=\"not_found\""))
        .isEqualTo(notFound + 2);
    assertThat(rows(device.id())).isZero();
  }

  @Test
  void should_answer_429_to_an_address_that_guessed_as_many_tokens_as_it_may() throws Exception {
    // From 127.0.0.2 (loopback too): the other tests' address keeps its own budget.
    InetAddress guesser = InetAddress.getByName("127.0.0.2");
    double limited = metric("fieldline_http_device_rejected_total{reason=\"failed_auth_limit\"");
    List<Integer> statuses = new ArrayList<>();

    // The default budget: 20 unknown tokens in a row.
    for (int i = 0; i < 21; i++) {
      statuses.add(statusFrom(guesser, "/api/v1/guess-" + i + "/telemetry"));
    }

    assertThat(statuses.subList(0, 20)).containsOnly(401);
    assertThat(statuses.get(20)).isEqualTo(429);
    assertThat(metric("fieldline_http_device_rejected_total{reason=\"failed_auth_limit\""))
        .isEqualTo(limited + 1);
    assertThat(devicePost("/api/v1/guess-21/telemetry", "{\"t\":1}").statusCode()).isEqualTo(401);
  }

  @Test
  void should_hand_requests_queued_between_two_polls_to_the_next_poll_without_delay()
      throws Exception {
    Device device = device();
    double announced = metric(ANNOUNCED);
    // The device polls back to back: only its first poll is announced.
    for (int i = 0; i < 3; i++) {
      assertThat(deviceGet(api(device, "rpc?timeout=1000")).statusCode()).isEqualTo(408);
    }
    assertThat(metric(ANNOUNCED) - announced).isEqualTo(1);

    // Between two polls, a persistent request is stored and offered: no poll takes it.
    HttpResponse<String> submitted =
        send(
            admin(
                "/api/rpc/oneway/" + device.id(),
                "{\"method\":\"stored\",\"persistent\":true,\"timeout\":10000}"));
    assertThat(submitted.statusCode()).isEqualTo(200);
    long start = System.nanoTime();
    HttpResponse<String> persistent = deviceGet(api(device, "rpc?timeout=20000"));

    assertThat(persistent.statusCode()).isEqualTo(200);
    assertThat(json(persistent).get("method").asText()).isEqualTo("stored");
    assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(10));

    // Likewise a lightweight call made while the device is between polls.
    CompletableFuture<HttpResponse<String>> call =
        http.sendAsync(
            admin("/api/rpc/oneway/" + device.id(), "{\"method\":\"light\",\"timeout\":15000}")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    await().atMost(Duration.ofSeconds(10)).until(() -> metric("fieldline_rpc_pending ") == 1);
    HttpResponse<String> lightweight = deviceGet(api(device, "rpc?timeout=20000"));

    assertThat(lightweight.statusCode()).isEqualTo(200);
    assertThat(json(lightweight).get("method").asText()).isEqualTo("light");
    assertThat(call.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  /** The status of a device's POST sent from {@code source} over a raw HTTP/1.1 connection. */
  private int statusFrom(InetAddress source, String path) throws IOException {
    try (Socket socket =
        new Socket(InetAddress.getLoopbackAddress(), server.httpPort(), source, 0)) {
      String body = "{\"t\":1}";
      String request =
          "POST "
              + path
              + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              + "Content-Length: "
              + body.length()
              + "\r\nConnection: close\r\n\r\n"
              + body;
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      String status = in.readLine(); // HTTP/1.1 401 Unauthorized
      return Integer.parseInt(status.split(" ")[1]);
    }
  }
}
