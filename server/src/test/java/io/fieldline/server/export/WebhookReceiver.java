package io.fieldline.server.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.fieldline.common.DeviceId;
import io.fieldline.server.cluster.DeviceFleet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A webhook receiver on 127.0.0.1 (the JDK's HTTP server) for the export ITs whose server runs in
 * another process: it checks each POST's signature, answers 200 and keeps the records in arrival
 * order, and reads them as a consumer does (docs/export.md): per device, a record whose {@code seq}
 * is not above the highest seen is a repeat and is dropped. It can be told to refuse (503) for a
 * while, so that a backlog builds up in the feed.
 *
 * <p>The records are those of {@link DeviceFleet} devices: a message's identity is its {@code ts}.
 */
final class WebhookReceiver implements AutoCloseable {

  static final String SECRET = "export-kill-secret-0123456789";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer server;
  private final List<JsonNode> records = new CopyOnWriteArrayList<>();
  private final AtomicInteger badSignatures = new AtomicInteger();
  private volatile boolean refusing;

  private WebhookReceiver(HttpServer server) {
    this.server = server;
  }

  static WebhookReceiver start() {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      WebhookReceiver receiver = new WebhookReceiver(server);
      server.createContext(
          "/hook",
          exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            String signature = exchange.getRequestHeaders().getFirst("X-Fieldline-Signature");
            if (!("sha256=" + hmac(body)).equals(signature)) {
              receiver.badSignatures.incrementAndGet();
            }
            if (receiver.refusing) {
              exchange.sendResponseHeaders(503, -1);
              exchange.close();
              return;
            }
            for (JsonNode record : JSON.readTree(body)) {
              receiver.records.add(record);
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
          });
      server.start();
      return receiver;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The body of {@code POST /api/fieldline/sinks} for a WEBHOOK sink to this receiver. */
  String sinkJson(String name) {
    return "{\"name\":\""
        + name
        + "\",\"type\":\"WEBHOOK\",\"configuration\":{\"url\":\"http://127.0.0.1:"
        + server.getAddress().getPort()
        + "/hook\",\"secret\":\""
        + SECRET
        + "\",\"lingerMs\":10,\"batchSize\":100}}";
  }

  /** While on, every POST is answered 503 and its records are not kept (the sink retries). */
  void refuse(boolean on) {
    refusing = on;
  }

  int received() {
    return records.size();
  }

  int badSignatures() {
    return badSignatures.get();
  }

  /** Whether every {@code expected} timestamp of every device arrived (repeats or not). */
  boolean hasAll(Map<DeviceId, Set<Long>> expected) {
    Map<String, List<Long>> arrived = new HashMap<>();
    for (JsonNode record : records) {
      arrived
          .computeIfAbsent(record.get("deviceId").asText(), k -> new ArrayList<>())
          .add(record.get("ts").asLong());
    }
    return expected.entrySet().stream()
        .allMatch(
            device ->
                arrived
                    .getOrDefault(device.getKey().toString(), List.of())
                    .containsAll(device.getValue()));
  }

  /** What a consumer keeps of one device, in arrival order. */
  record Kept(List<Long> timestamps, int repeatsDropped) {}

  /** Per device id, the timestamps a consumer keeps after dropping repeats by {@code seq}. */
  Map<String, Kept> kept() {
    Map<String, List<Long>> timestamps = new LinkedHashMap<>();
    Map<String, Integer> dropped = new HashMap<>();
    Map<String, Long> lastSeq = new HashMap<>();
    for (JsonNode record : records) {
      String device = record.get("deviceId").asText();
      long seq = record.get("seq").asLong();
      if (seq <= lastSeq.getOrDefault(device, Long.MIN_VALUE)) {
        dropped.merge(device, 1, Integer::sum);
        continue;
      }
      lastSeq.put(device, seq);
      timestamps.computeIfAbsent(device, k -> new ArrayList<>()).add(record.get("ts").asLong());
    }
    Map<String, Kept> kept = new HashMap<>();
    timestamps.forEach(
        (device, list) -> kept.put(device, new Kept(list, dropped.getOrDefault(device, 0))));
    return kept;
  }

  /**
   * Checks the consumer's view of each device of {@code devices}: after dropping repeats by {@code
   * seq}, every acknowledged message, nothing that was not sent, in publish order (timestamps never
   * go back), and a message kept twice (two different {@code seq}) only if the device sent it again
   * for want of a PUBACK (docs/export.md, "At least once", case 4). Returns the repeats dropped.
   */
  int assertConsumerView(List<DeviceFleet.Device> devices) {
    Map<String, Kept> kept = kept();
    int repeats = 0;
    for (DeviceFleet.Device device : devices) {
      Kept view = kept.getOrDefault(device.id.toString(), new Kept(List.of(), 0));
      repeats += view.repeatsDropped();
      assertThat(view.timestamps()).as("device %s: in publish order", device.id).isSorted();
      assertThat(view.timestamps())
          .as("device %s: every acknowledged message is kept", device.id)
          .containsAll(device.acked());
      assertThat(device.sent())
          .as("device %s: nothing that was not sent", device.id)
          .containsAll(view.timestamps());
      Set<Long> seen = new HashSet<>();
      Set<Long> twice = new HashSet<>();
      for (long ts : view.timestamps()) {
        if (!seen.add(ts)) {
          twice.add(ts);
        }
      }
      assertThat(device.retransmitted())
          .as("device %s: kept twice only when sent twice", device.id)
          .containsAll(twice);
    }
    return repeats;
  }

  @Override
  public void close() {
    server.stop(0);
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
