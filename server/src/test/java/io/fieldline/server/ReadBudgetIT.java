package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.device.Device;
import io.fieldline.server.rest.JwtTokens;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Storage reads for users cannot starve device writes (issue 32, item 3): heavy history queries at
 * their bounds (every key a query may name, the longest range, with data; raw and aggregated) from
 * many users at once, over REST and WebSocket, while a bystander device publishes QoS 1 throughout
 * and has every message acknowledged and stored. Reads over the budget are refused with the
 * documented answer: 429 (the user's share) or 503 (the node's), both with {@code Retry-After} and
 * a ThingsBoard error body; queries over the per-query bounds get 400. The read budget is small
 * here so that it is reached by a handful of clients.
 */
class ReadBudgetIT extends RestTestBase {

  private static final String SECRET = "read-budget-it-secret-0123456789abcdef";
  private static final int KEYS = 60;
  private static final int POINTS = 500;
  private static final long START = 1_600_000_000_000L;
  private static final long STEP = Duration.ofHours(12).toMillis();
  private static final long RANGE = Duration.ofDays(366).toMillis();

  private Bystander bystander;
  private Device heavy;
  private JwtTokens tokens;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.auth.jwt-secret",
        SECRET,
        "fieldline.cassandra.reads.max-inflight",
        2,
        "fieldline.cassandra.reads.max-queued",
        2,
        "fieldline.cassandra.reads.max-per-user",
        2,
        "fieldline.cassandra.reads.max-wait",
        "5 s",
        "fieldline.rest.max-keys",
        KEYS,
        "fieldline.rest.max-points",
        100_000,
        "fieldline.rest.max-range",
        "366 days");
  }

  @BeforeAll
  void seed() {
    bystander = new Bystander(this, "read-budget-bystander");
    tokens = new JwtTokens(SECRET, Duration.ofHours(1), Duration.ofHours(2), Clock.systemUTC());
    heavy = createDevice("read-budget-heavy", "read-budget-heavy-token");
    Mqtt3BlockingClient device = connectedDevice(heavy);
    // 40 timestamps of 60 keys per message, ~30 KB: 500 values per key over 250 days.
    for (int first = 0; first < POINTS; first += 40) {
      StringBuilder payload = new StringBuilder("[");
      for (int i = first; i < Math.min(POINTS, first + 40); i++) {
        payload.append(i == first ? "" : ",").append("{\"ts\":").append(START + i * STEP);
        payload.append(",\"values\":{");
        for (int k = 0; k < KEYS; k++) {
          payload.append(k == 0 ? "" : ",").append("\"k").append(k).append("\":").append(i + k);
        }
        payload.append("}}");
      }
      device
          .publishWith()
          .topic("v1/devices/me/telemetry")
          .qos(MqttQos.AT_LEAST_ONCE)
          .payload(payload.append("]").toString().getBytes(StandardCharsets.UTF_8))
          .send();
    }
    device.disconnect();
    assertThat(rows(heavy)).isEqualTo((long) KEYS * POINTS);
  }

  private static String allKeys() {
    return IntStream.range(0, KEYS).mapToObj(k -> "k" + k).collect(Collectors.joining(","));
  }

  private String history(String extra) {
    return "/api/plugins/telemetry/DEVICE/"
        + heavy.id()
        + "/values/timeseries?keys="
        + allKeys()
        + "&startTs="
        + START
        + "&endTs="
        + (START + RANGE)
        + extra;
  }

  /** The heaviest raw and aggregated queries the bounds allow, alternately. */
  private String heavyQuery(int i) {
    return i % 2 == 0
        ? history("&limit=1000")
        : history("&agg=AVG&interval=" + Duration.ofDays(1).toMillis());
  }

  private CompletableFuture<HttpResponse<String>> getAsync(String path, String user) {
    String bearer = tokens.issue(user, JwtTokens.Kind.ACCESS);
    return http.sendAsync(
        HttpRequest.newBuilder(uri(path))
            .header("X-Authorization", "Bearer " + bearer)
            .timeout(Duration.ofSeconds(30))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Publishes (QoS 1, each stored) until every answer is in. */
  private List<HttpResponse<String>> publishUntilAnswered(
      List<CompletableFuture<HttpResponse<String>>> answers) {
    CompletableFuture<Void> all =
        CompletableFuture.allOf(answers.toArray(new CompletableFuture<?>[0]));
    do {
      bystander.publishesAndAllStored();
    } while (!all.isDone());
    return answers.stream().map(CompletableFuture::join).toList();
  }

  private static void assertRefused(HttpResponse<String> answer, int status, int errorCode) {
    assertThat(answer.statusCode()).isEqualTo(status);
    assertThat(answer.headers().firstValue("Retry-After")).hasValue("1");
    JsonNode body = json(answer);
    assertThat(body.path("status").asInt()).isEqualTo(status);
    assertThat(body.path("errorCode").asInt()).isEqualTo(errorCode);
    assertThat(body.path("message").asText())
        .containsAnyOf("too many concurrent reads", "overloaded")
        .doesNotContain("Exception");
  }

  @Test
  void should_refuse_a_users_reads_beyond_its_share_while_devices_keep_their_pubacks() {
    bystander.connect();
    try {
      List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        answers.add(getAsync(heavyQuery(i), "greedy@test.local"));
      }

      List<HttpResponse<String>> got = publishUntilAnswered(answers);

      List<HttpResponse<String>> refused =
          got.stream().filter(answer -> answer.statusCode() != 200).toList();
      assertThat(refused).as("beyond max-per-user = 2").isNotEmpty();
      refused.forEach(answer -> assertRefused(answer, 429, 33));
      assertThat(got.size() - refused.size()).as("served").isGreaterThanOrEqualTo(2);
      JsonNode served = json(got.stream().filter(a -> a.statusCode() == 200).findFirst().get());
      assertThat(served.size()).isEqualTo(KEYS);
      assertThat(metric("fieldline_store_reads_refused_total{reason=\"user_limit\"")).isPositive();
      bystander.publishesAndAllStored();
    } finally {
      bystander.disconnect();
    }
  }

  @Test
  void should_refuse_reads_beyond_the_nodes_budget_while_devices_keep_their_pubacks() {
    bystander.connect();
    try (WsTestClient ws =
        WsTestClient.open(URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws"))) {
      ws.send("{\"authCmd\":{\"cmdId\":0,\"token\":\"" + token + "\"}}");
      // WebSocket history reads of every key over the longest range, beside the REST ones.
      for (int cmd = 1; cmd <= 4; cmd++) {
        ws.send(
            "{\"cmds\":[{\"type\":\"TIMESERIES_HISTORY\",\"cmdId\":"
                + cmd
                + ",\"entityType\":\"DEVICE\",\"entityId\":\""
                + heavy.id()
                + "\",\"keys\":\""
                + allKeys()
                + "\",\"startTs\":"
                + START
                + ",\"endTs\":"
                + (START + RANGE)
                + ",\"limit\":1000}]}");
      }
      List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
      for (int user = 0; user < 8; user++) {
        for (int i = 0; i < 2; i++) {
          answers.add(getAsync(heavyQuery(user + i), "reader-" + user + "@test.local"));
        }
      }

      List<HttpResponse<String>> got = publishUntilAnswered(answers);

      List<HttpResponse<String>> refused =
          got.stream().filter(answer -> answer.statusCode() != 200).toList();
      assertThat(refused).as("beyond 2 running + 2 waiting").isNotEmpty();
      refused.forEach(answer -> assertRefused(answer, 503, 2));
      assertThat(refused.size()).isLessThan(got.size());
      for (int cmd = 1; cmd <= 4; cmd++) {
        // Each WebSocket command is answered, with data or an error; the session stays.
        assertThat(ws.next(cmd).path("subscriptionId").asInt()).isEqualTo(cmd);
      }
      assertThat(ws.isOpen()).isTrue();
      assertThat(metric("fieldline_store_reads_refused_total{reason=\"queue_full\"")).isPositive();
      bystander.publishesAndAllStored();
      // Once the load is gone, a read is served again.
      assertThat(getAsync(heavyQuery(1), "reader-0@test.local").join().statusCode()).isEqualTo(200);
    } finally {
      bystander.disconnect();
    }
  }

  @Test
  void should_count_a_websocket_users_reads_against_its_share() {
    String bearer = tokens.issue("ws-reader@test.local", JwtTokens.Kind.ACCESS);
    try (WsTestClient ws =
        WsTestClient.open(URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws"))) {
      ws.send("{\"authCmd\":{\"cmdId\":0,\"token\":\"" + bearer + "\"}}");
      // Four history reads in one message: within the node's budget (2 running + 2 waiting), but
      // twice the user's share: those beyond it are refused while the first ones are read.
      String commands =
          IntStream.rangeClosed(1, 4)
              .mapToObj(
                  cmd ->
                      "{\"type\":\"TIMESERIES_HISTORY\",\"cmdId\":"
                          + cmd
                          + ",\"entityType\":\"DEVICE\",\"entityId\":\""
                          + heavy.id()
                          + "\",\"keys\":\""
                          + allKeys()
                          + "\",\"startTs\":"
                          + START
                          + ",\"endTs\":"
                          + (START + RANGE)
                          + ",\"limit\":1000}")
              .collect(Collectors.joining(",", "{\"cmds\":[", "]}"));
      ws.send(commands);

      List<JsonNode> updates = IntStream.rangeClosed(1, 4).mapToObj(ws::next).toList();

      List<JsonNode> refused =
          updates.stream().filter(update -> update.path("errorCode").asInt() != 0).toList();
      assertThat(refused).as("beyond max-per-user = 2").isNotEmpty().hasSizeLessThanOrEqualTo(2);
      refused.forEach(
          update ->
              assertThat(update.path("errorMsg").asText())
                  .contains("too many concurrent reads")
                  .doesNotContain("Exception"));
      updates.stream()
          .filter(update -> update.path("errorCode").asInt() == 0)
          .forEach(update -> assertThat(update.path("data").size()).isEqualTo(KEYS));
      assertThat(ws.isOpen()).isTrue();
    }
  }

  @Test
  void should_answer_400_when_a_query_is_over_its_bounds() {
    String base = "/api/plugins/telemetry/DEVICE/" + heavy.id() + "/values/timeseries?";
    String over = allKeys() + ",k" + KEYS;
    assertThat(get(base + "keys=" + over + "&startTs=0&endTs=1").statusCode()).isEqualTo(400);
    HttpResponse<String> points = get(history("&limit=2000"));
    assertThat(points.statusCode()).isEqualTo(400);
    assertThat(json(points).path("message").asText()).contains("more than 100000");
    HttpResponse<String> buckets =
        get(history("&agg=AVG&interval=" + Duration.ofHours(1).toMillis()));
    assertThat(buckets.statusCode()).isEqualTo(400);
    assertThat(json(buckets).path("message").asText()).contains("too many intervals");
    HttpResponse<String> range =
        get(base + "keys=k1&startTs=" + START + "&endTs=" + (START + RANGE + 1));
    assertThat(range.statusCode()).isEqualTo(400);
    assertThat(json(range).path("message").asText()).contains("split the range");
    // No keys named: every key of the device, which must be within max-keys.
    Device wide = createDevice("read-budget-wide", "read-budget-wide-token");
    Mqtt3BlockingClient device = connectedDevice(wide);
    String values =
        IntStream.rangeClosed(0, KEYS)
            .mapToObj(k -> "\"w" + k + "\":1")
            .collect(Collectors.joining(",", "{", "}"));
    device
        .publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(values.getBytes(StandardCharsets.UTF_8))
        .send();
    device.disconnect();
    HttpResponse<String> resolved =
        get(
            "/api/plugins/telemetry/DEVICE/"
                + wide.id()
                + "/values/timeseries?startTs=0&endTs="
                + RANGE);
    assertThat(resolved.statusCode()).isEqualTo(400);
    assertThat(json(resolved).path("message").asText()).contains("name the keys");
  }
}
