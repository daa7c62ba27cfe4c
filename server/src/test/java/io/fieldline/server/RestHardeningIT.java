package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import io.fieldline.common.device.Device;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 11's REST reproductions against a live server: parameters validated to 400, bodies limited
 * to 413, logins throttled to 429 per user and per address, the CORS policy; a bystander device
 * publishes over MQTT the whole time and every acknowledged message must be stored.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RestHardeningIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ORIGIN = "https://app.example.com";

  private String token;
  private Device device;
  private final AtomicBoolean publishing = new AtomicBoolean(true);
  private final AtomicLong acked = new AtomicLong();
  private final ExecutorService bystanderThread = Executors.newSingleThreadExecutor();
  private Device bystander;
  private Future<?> bystanderRun;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.http.login.max-failures-per-user",
        3,
        "fieldline.http.login.max-failures-per-address",
        6,
        "fieldline.http.login.window",
        "3 seconds",
        "fieldline.http.cors.allowed-origins",
        ORIGIN);
  }

  @BeforeAll
  void loginAndStartBystander() throws Exception {
    HttpResponse<String> login = post("/api/auth/login", null, credentials(ADMIN, PASSWORD));
    assertThat(login.statusCode()).isEqualTo(200);
    token = JSON.readTree(login.body()).get("token").asText();
    device = createDevice("hardening-target");
    bystander = createDevice("hardening-bystander", "hardening-bystander-token");
    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier("hardening-bystander")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .buildBlocking();
    client
        .connectWith()
        .simpleAuth()
        .username("hardening-bystander-token")
        .applySimpleAuth()
        .send();
    bystanderRun =
        bystanderThread.submit(
            () -> {
              long ts = 1_700_000_000_000L;
              try {
                while (publishing.get() && acked.get() < 2_000) {
                  // Explicit, distinct timestamps: one stored row per acknowledged message.
                  String payload = "{\"ts\":" + (ts + acked.get()) + ",\"values\":{\"n\":1}}";
                  client
                      .publishWith()
                      .topic("v1/devices/me/telemetry")
                      .qos(MqttQos.AT_LEAST_ONCE)
                      .payload(payload.getBytes(StandardCharsets.UTF_8))
                      .send();
                  acked.incrementAndGet();
                }
              } finally {
                client.disconnect();
              }
              return null;
            });
  }

  @AfterAll
  void stopBystander() {
    publishing.set(false);
    bystanderThread.shutdownNow();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "values/timeseries?keys=t&startTs=-9223372036854775808&endTs=9223372036854775807",
        "values/timeseries?keys=t&startTs=0&endTs=9223372036854775807",
        "values/timeseries?keys=t&startTs=-1&endTs=10",
        "values/timeseries?keys=t&startTs=10&endTs=5",
        "values/timeseries?keys=t&startTs=0&endTs=1000&interval=0&agg=AVG",
        "values/timeseries?keys=t&startTs=0&endTs=1000&interval=-5&agg=AVG",
        "values/timeseries?keys=t&startTs=0&endTs=1000&limit=4294967297",
        "values/timeseries?keys=t&startTs=0&endTs=1000&limit=0",
        "values/timeseries?keys=t&startTs=0&endTs=1000&agg=BOGUS",
        "values/timeseries?keys=t&startTs=0&endTs=1000&orderBy=SIDEWAYS",
        "values/timeseries?keys=t&startTs=abc&endTs=1000",
        "values/timeseries?keys=a%01b",
        "values/attributes?keys=a%0Ab",
        "values/attributes/NOT_A_SCOPE",
      })
  void should_answer_400_with_the_error_body_when_a_telemetry_parameter_is_out_of_range(
      String query) throws Exception {
    assertBadRequest(get("/api/plugins/telemetry/DEVICE/" + device.id() + "/" + query, token));
  }

  @Test
  void should_answer_400_when_a_key_list_is_too_long_or_a_key_too_long() throws Exception {
    String manyKeys = IntStream.range(0, 101).mapToObj(i -> "k" + i).collect(joining());
    String base = "/api/plugins/telemetry/DEVICE/" + device.id() + "/values/timeseries?keys=";
    assertBadRequest(get(base + manyKeys, token));
    assertBadRequest(get(base + "x".repeat(256), token));
  }

  @Test
  void should_answer_400_when_a_listing_or_dead_letter_parameter_is_invalid() throws Exception {
    assertBadRequest(get("/api/tenant/devices?pageSize=abc", token));
    assertBadRequest(get("/api/tenant/devices?pageSize=1000&page=2000000000", token));
    assertBadRequest(get("/api/tenant/devices?pageSize=0", token));
    assertBadRequest(get("/api/fieldline/deadletters/DEVICE/" + device.id() + "?limit=x", token));
    assertBadRequest(get("/api/fieldline/deadletters/DEVICE/" + device.id() + "?limit=0", token));
  }

  @Test
  void should_answer_400_when_a_device_name_is_too_long_or_has_control_characters()
      throws Exception {
    assertBadRequest(post("/api/device", token, "{\"name\":\"" + "n".repeat(256) + "\"}"));
    assertBadRequest(post("/api/device", token, "{\"name\":\"bad\\u0001name\"}"));
    assertBadRequest(post("/api/device", token, "{\"name\":\"ok\",\"type\":\"t\\nx\"}"));
    assertBadRequest(post("/api/device?accessToken=tok%00en", token, "{\"name\":\"ok-2\"}"));
  }

  @Test
  void should_answer_400_at_once_when_a_bulk_name_prefix_leaves_no_room_for_the_index()
      throws Exception {
    long start = System.nanoTime();
    assertBadRequest(
        post(
            "/api/fieldline/devices/bulk",
            token,
            "{\"namePrefix\":\"" + "p".repeat(300) + "\",\"count\":3}"));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertBadRequest(
        post(
            "/api/fieldline/devices/bulk",
            token,
            "{\"namePrefix\":\"" + "p".repeat(254) + "\",\"count\":11}"));
    assertBadRequest(post("/api/fieldline/devices/bulk", token, "{\"namePrefix\":\"p\\u0007\"}"));
    assertBadRequest(
        post("/api/fieldline/devices/bulk", token, "{\"namePrefix\":\"p\",\"count\":\"many\"}"));
  }

  @Test
  void should_answer_413_with_the_error_body_when_a_body_is_over_the_limit() throws Exception {
    // Three times the limit (64 KiB), not megabytes: the server answers 413 on the headers and
    // closes, and a client still writing a body larger than the socket buffers would meet a broken
    // pipe instead of reading the answer (seen under load).
    HttpResponse<String> login =
        post("/api/auth/login", null, "{\"username\":\"" + "u".repeat(200_000) + "\"}");
    assertThat(login.statusCode()).isEqualTo(413);
    assertThat(JSON.readTree(login.body()).get("status").asInt()).isEqualTo(413);
    HttpResponse<String> create =
        post("/api/device", token, "{\"name\":\"" + "n".repeat(100_000) + "\"}");
    assertThat(create.statusCode()).isEqualTo(413);
    HttpResponse<String> sink =
        post(
            "/api/fieldline/sinks",
            token,
            "{\"name\":\"s\",\"type\":\"WEBHOOK\",\"configuration\":{\"url\":\""
                + "u".repeat(100_000)
                + "\"}}");
    assertThat(sink.statusCode()).isEqualTo(413);
  }

  @Test
  @Order(1)
  void should_answer_429_with_retry_after_when_one_user_fails_too_often_until_the_window_ends()
      throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(post("/api/auth/login", null, credentials(ADMIN, "wrong")).statusCode())
          .isEqualTo(401);
    }
    HttpResponse<String> refused = post("/api/auth/login", null, credentials(ADMIN, PASSWORD));
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(JSON.readTree(refused.body()).get("status").asInt()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After"))
        .hasValueSatisfying(value -> assertThat(Long.parseLong(value)).isBetween(1L, 3L));
    assertThat(metricOverHttp("fieldline_http_login_failed_total{reason=\"bad_credentials\""))
        .isGreaterThanOrEqualTo(3);
    assertThat(metricOverHttp("fieldline_http_login_failed_total{reason=\"throttled\""))
        .isGreaterThanOrEqualTo(1);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> post("/api/auth/login", null, credentials(ADMIN, PASSWORD)).statusCode() == 200);
  }

  @Test
  @Order(2)
  void should_answer_429_for_every_name_when_one_address_fails_too_often() {
    // From 127.0.0.2, so 127.0.0.1 (every other test) is a different source address.
    for (int i = 0; i < 6; i++) {
      assertThat(rawLogin("127.0.0.2", credentials("guess-" + i + "@x", "wrong")))
          .startsWith("HTTP/1.1 401");
    }
    String refused = rawLogin("127.0.0.2", credentials(ADMIN, PASSWORD));
    assertThat(refused).startsWith("HTTP/1.1 429").containsIgnoringCase("Retry-After:");
    assertThat(post("/api/auth/login", null, credentials(ADMIN, PASSWORD)).statusCode())
        .as("another address is not locked out")
        .isEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> rawLogin("127.0.0.2", credentials(ADMIN, PASSWORD)).startsWith("HTTP/1.1 200"));
  }

  @Test
  void should_send_cors_headers_only_when_the_origin_is_configured() {
    HttpResponse<String> allowed = send(get("/health/live").header("Origin", ORIGIN));
    assertThat(allowed.headers().firstValue("Access-Control-Allow-Origin")).hasValue(ORIGIN);
    HttpResponse<String> other =
        send(get("/health/live").header("Origin", "https://evil.example.com"));
    assertThat(other.statusCode()).isEqualTo(200);
    assertThat(other.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
    HttpResponse<String> preflight =
        send(
            HttpRequest.newBuilder(uri("/api/device"))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", ORIGIN)
                .header("Access-Control-Request-Method", "POST"));
    assertThat(preflight.statusCode()).isEqualTo(204);
    assertThat(preflight.headers().firstValue("Access-Control-Allow-Origin")).hasValue(ORIGIN);
    assertThat(preflight.headers().firstValue("Access-Control-Allow-Headers"))
        .hasValueSatisfying(value -> assertThat(value).contains("X-Authorization"));
    // PUT: the export sinks' update (PUT /api/fieldline/sinks/{id}).
    assertThat(preflight.headers().firstValue("Access-Control-Allow-Methods"))
        .hasValue("GET, POST, PUT, DELETE, OPTIONS");
  }

  @Test
  @Order(Integer.MAX_VALUE)
  void should_store_every_acknowledged_bystander_message_when_the_rest_api_is_abused()
      throws Exception {
    publishing.set(false);
    bystanderRun.get();
    assertThat(acked.get()).isPositive();
    await().atMost(Duration.ofSeconds(30)).until(() -> rows(bystander) == acked.get());
  }

  private static java.util.stream.Collector<CharSequence, ?, String> joining() {
    return Collectors.joining(",");
  }

  private static String credentials(String user, String password) {
    return "{\"username\":\"" + user + "\",\"password\":\"" + password + "\"}";
  }

  private static void assertBadRequest(HttpResponse<String> response) throws IOException {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("status").asInt()).isEqualTo(400);
    assertThat(body.get("message").asText()).isNotBlank();
  }

  private long metricOverHttp(String prefix) {
    String text = send(get("/metrics")).body();
    return text.lines()
        .filter(line -> line.startsWith(prefix))
        .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .sum();
  }

  // A login over a socket bound to the given local address; the whole answer, status line first.
  private String rawLogin(String localAddress, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    String request =
        "POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Connection: close\r\nContent-Length: "
            + bytes.length
            + "\r\n\r\n"
            + body;
    try (Socket socket = new Socket()) {
      socket.bind(new InetSocketAddress(localAddress, 0));
      socket.connect(new InetSocketAddress("127.0.0.1", server.httpPort()), 10_000);
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
      socket.getOutputStream().flush();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private HttpRequest.Builder get(String path) {
    return HttpRequest.newBuilder(uri(path)).GET();
  }
}
