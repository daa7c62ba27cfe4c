package io.fieldline.server.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.sun.net.httpserver.HttpServer;
import io.fieldline.common.device.Device;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.export.SinkAdmin;
import io.fieldline.export.SinkDraft;
import io.fieldline.export.SinkView;
import io.fieldline.server.ServerTestBase;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The way out, end to end: devices publish over MQTT (HiveMQ client), a webhook receiver on
 * 127.0.0.1 (the JDK's HTTP server) gets every acknowledged message, signed, in order per device —
 * through failures of the receiver — and a batch it refuses lands in the dead letters.
 */
class WebhookExportIT extends ServerTestBase {

  private static final String SECRET = "webhook-secret-0123456789";
  private static final ObjectMapper JSON = new ObjectMapper();

  private HttpServer receiver;
  private final List<JsonNode> received = new CopyOnWriteArrayList<>();
  private final AtomicInteger failuresLeft = new AtomicInteger();
  private final AtomicInteger badSignatures = new AtomicInteger();
  private final AtomicInteger posts = new AtomicInteger();

  @BeforeEach
  void startReceiver() throws IOException {
    received.clear(); // one server (and these fields) for the whole class
    receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext(
        "/hook",
        exchange -> {
          byte[] body = exchange.getRequestBody().readAllBytes();
          posts.incrementAndGet();
          String signature = exchange.getRequestHeaders().getFirst("X-Fieldline-Signature");
          if (!("sha256=" + hmac(body)).equals(signature)) {
            badSignatures.incrementAndGet();
          }
          int status = 200;
          if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            status = 500;
          } else if (new String(body, StandardCharsets.UTF_8).contains("\"poison\"")) {
            status = 400;
          } else {
            for (JsonNode record : JSON.readTree(body)) {
              received.add(record);
            }
          }
          exchange.sendResponseHeaders(status, -1);
          exchange.close();
        });
    receiver.start();
  }

  @AfterEach
  void stopReceiver() {
    receiver.stop(0);
    for (SinkView sink : admin().list().toCompletableFuture().join()) {
      admin().delete(sink.id()).toCompletableFuture().join();
    }
  }

  @Test
  void should_deliver_every_acknowledged_message_in_order_per_device_through_500s() {
    failuresLeft.set(3);
    SinkView sink = createSink("hook-order");
    int devices = 4;
    int perDevice = 50;
    List<Device> created = new ArrayList<>();
    for (int d = 0; d < devices; d++) {
      created.add(createDevice("export-order-" + d, "export-order-token-" + d));
    }
    long base = 1_750_000_000_000L;
    for (int d = 0; d < devices; d++) {
      Mqtt3BlockingClient client = connectedDevice(created.get(d));
      for (int i = 0; i < perDevice; i++) {
        // Returns once the PUBACK arrived: every one of these is stored, so must be exported.
        client
            .publishWith()
            .topic("v1/devices/me/telemetry")
            .qos(MqttQos.AT_LEAST_ONCE)
            .payload(
                ("{\"ts\":" + (base + i) + ",\"values\":{\"n\":" + i + "}}")
                    .getBytes(StandardCharsets.UTF_8))
            .send();
      }
      client.disconnect();
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(distinctPerDevice()).hasSize(devices * perDevice));
    assertThat(badSignatures.get()).isZero();
    // Per device: dropping what a consumer would drop (seq not above the last one seen), the
    // values arrive exactly once each, in the order they were published.
    Map<String, List<Integer>> byDevice = new ConcurrentHashMap<>();
    Map<String, Long> lastSeq = new ConcurrentHashMap<>();
    for (JsonNode record : received) {
      String device = record.get("deviceId").asText();
      if (!record.get("deviceName").asText().startsWith("export-order-")) {
        continue;
      }
      long seq = record.get("seq").asLong();
      if (seq <= lastSeq.getOrDefault(device, Long.MIN_VALUE)) {
        continue;
      }
      lastSeq.put(device, seq);
      byDevice.computeIfAbsent(device, k -> new ArrayList<>()).add(record.at("/values/n").asInt());
      assertThat(record.get("kind").asText()).isEqualTo("TELEMETRY");
      assertThat(record.get("deviceType").asText()).isEqualTo("test");
    }
    assertThat(byDevice).hasSize(devices);
    for (List<Integer> values : byDevice.values()) {
      assertThat(values).containsExactlyElementsOf(range(perDevice));
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              SinkView now = admin().get(sink.id()).toCompletableFuture().join().orElseThrow();
              assertThat(now.status().delivered()).isGreaterThanOrEqualTo(devices * perDevice);
              assertThat(now.status().lastError()).contains("500");
              assertThat(now.configuration().has("secret")).isFalse();
            });
  }

  @Test
  void should_put_a_refused_batch_in_the_dead_letters_and_go_on() {
    SinkView sink = createSink("hook-dead-letters");
    Device device = createDevice("export-poison", "export-poison-token");
    Mqtt3BlockingClient client = connectedDevice(device);
    publish(client, "{\"poison\":1}");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              List<SinkDeadLetter> letters =
                  admin().deadLetters(sink.id(), 10).toCompletableFuture().join().orElseThrow();
              assertThat(letters).hasSize(1);
              assertThat(letters.get(0).status()).isEqualTo(400);
              assertThat(letters.get(0).body()).contains("poison");
            });
    // Delivery went on past the refused batch.
    publish(client, "{\"after\":2}");
    client.disconnect();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(received)
                    .anySatisfy(
                        record -> assertThat(record.at("/values/after").asInt()).isEqualTo(2)));
  }

  private static void publish(Mqtt3BlockingClient client, String payload) {
    client
        .publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  private SinkView createSink(String name) {
    ObjectNode configuration = JSON.createObjectNode();
    configuration.put("url", "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook");
    configuration.put("secret", SECRET);
    configuration.put("lingerMs", 10);
    configuration.put("batchSize", 20);
    return admin()
        .create(new SinkDraft(name, "WEBHOOK", JSON.createObjectNode(), configuration))
        .toCompletableFuture()
        .join();
  }

  private List<String> distinctPerDevice() {
    return received.stream()
        .filter(record -> record.get("deviceName").asText().startsWith("export-order-"))
        .map(record -> record.get("deviceId").asText() + "/" + record.at("/values/n").asInt())
        .distinct()
        .toList();
  }

  private SinkAdmin admin() {
    return server.sinkAdmin().orElseThrow();
  }

  private static List<Integer> range(int n) {
    List<Integer> values = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      values.add(i);
    }
    return values;
  }

  private static String hmac(byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      return HexFormat.of().formatHex(mac.doFinal(body));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException(e);
    }
  }
}
