package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.device.Device;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.binder.logging.LogbackMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The WebSocket API's memory bounds at their largest, on one server: every session, subscription
 * and key allowed, with key names of the longest length, stays under the node's memory budget (and
 * the budget refuses the next subscription with a clear error); for a client that never reads its
 * socket the server queues at most {@code max-queued-bytes} (counted as framed, multi-byte
 * characters included) before it closes it; a message over the size limit is counted as what it is.
 * A {@link Bystander} publishes QoS 1 through each test and every message it got acknowledged is
 * stored.
 */
class WebSocketMemoryIT extends RestTestBase {

  private static final int SESSIONS = 4;
  private static final int SUBSCRIPTIONS = 25;
  private static final int KEYS = 200;
  private static final long BUDGET = 24L * 1024 * 1024;
  private static final long MAX_QUEUED_BYTES = 256 * 1024;
  private static final int MAX_MESSAGE = 64 * 1024;

  private Bystander bystander;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.ws.max-sessions-per-user", SESSIONS,
        "fieldline.ws.max-sessions", SESSIONS,
        "fieldline.ws.max-subscriptions-per-session", SUBSCRIPTIONS,
        "fieldline.ws.max-keys-per-command", KEYS,
        "fieldline.ws.memory-budget", BUDGET,
        "fieldline.ws.max-queued-bytes", MAX_QUEUED_BYTES,
        "fieldline.ws.max-queued-updates", 10_000,
        "fieldline.ws.max-message-size", MAX_MESSAGE,
        "pekko.http.server.socket-options.so-send-buffer-size", "4 KiB");
  }

  @BeforeEach
  void connectBystander() {
    if (bystander == null) {
      bystander = new Bystander(this, "wsmemory-bystander");
    }
    bystander.connect();
    bystander.publishesAndAllStored();
  }

  @AfterEach
  void bystanderStillServed() {
    bystander.publishesAndAllStored();
    bystander.disconnect();
  }

  private WsTestClient authenticated() {
    WsTestClient ws =
        WsTestClient.open(URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws"));
    ws.send("{\"authCmd\":{\"cmdId\":0,\"token\":\"" + token + "\"}}");
    return ws;
  }

  private Device device() {
    String name = "wsmem-" + UUID.randomUUID();
    return createDevice(name, name + "-token");
  }

  /** Key {@code i}: 255 characters, the longest a key may be. */
  private static String key(int i) {
    return String.format(Locale.ROOT, "%03d", i) + "k".repeat(252);
  }

  private static String subscribe(int cmdId, Device device, int keys) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      names.add(key(i));
    }
    return "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":"
        + cmdId
        + ",\"entityType\":\"DEVICE\",\"entityId\":\""
        + device.id()
        + "\",\"scope\":\"LATEST_TELEMETRY\",\"keys\":\""
        + String.join(",", names)
        + "\"}]}";
  }

  private static long retainedHeap() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
    }
    return least;
  }

  @Test
  void should_keep_the_heap_under_the_budget_and_refuse_the_next_subscription_when_full() {
    Device device = device();
    Mqtt3BlockingClient mqtt = connectedDevice(device);
    // A value for every key: each subscription then keeps per-key state for all of them.
    StringBuilder values = new StringBuilder("{");
    for (int i = 0; i < KEYS; i++) {
      values.append(i == 0 ? "" : ",").append('"').append(key(i)).append("\":").append(i);
    }
    publish(mqtt, "v1/devices/me/telemetry", values.append('}').toString());
    mqtt.disconnect();

    try (WsTestClient tooMany = authenticated()) {
      tooMany.send(subscribe(1, device, KEYS + 1));
      JsonNode refused = tooMany.next(1);
      assertThat(refused.path("errorCode").asInt()).isEqualTo(2);
      assertThat(refused.path("errorMsg").asText()).contains("at most " + KEYS);
    }
    assertThat(metric("fieldline_ws_commands_rejected_total{reason=\"too_many_keys\""))
        .isEqualTo(1);
    await().until(() -> metric("fieldline_ws_sessions ") == 0);

    long before = retainedHeap();
    List<WsTestClient> sessions = new ArrayList<>();
    int accepted = 0;
    int refusedForMemory = 0;
    try {
      for (int s = 0; s < SESSIONS; s++) {
        WsTestClient ws = authenticated();
        sessions.add(ws);
        for (int cmdId = 1; cmdId <= SUBSCRIPTIONS; cmdId++) {
          ws.send(subscribe(cmdId, device, KEYS));
          JsonNode first = ws.next(cmdId);
          if (first.path("errorCode").asInt() == 0) {
            assertThat(first.path("data").size()).isEqualTo(KEYS);
            accepted++;
          } else {
            assertThat(first.path("errorCode").asInt()).isEqualTo(2);
            assertThat(first.path("errorMsg").asText()).contains("memory budget");
            refusedForMemory++;
          }
        }
        if (s == 1) {
          bystander.publishesAndAllStored();
        }
      }
      assertThat(sessions).allMatch(WsTestClient::isOpen);
      // The node is full (max-sessions): the server refuses this one as it opens, before any
      // command, and may have closed it before the login goes out.
      try (WsTestClient oneMore =
          WsTestClient.open(URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws"))) {
        JsonNode refused = oneMore.nextAny();
        assertThat(refused.path("errorCode").asInt()).isEqualTo(2);
        assertThat(refused.path("errorMsg").asText()).contains("Too many sessions");
        assertThat(oneMore.awaitClosed()).isTrue();
      }
      bystander.publishesAndAllStored();

      long retained = retainedHeap() - before;
      double used = metric("fieldline_ws_memory_used ");
      assertThat(refusedForMemory).as("subscriptions refused for the budget").isPositive();
      assertThat(accepted + refusedForMemory).isEqualTo(SESSIONS * SUBSCRIPTIONS);
      assertThat(used).isLessThanOrEqualTo(BUDGET);
      assertThat(retained)
          .as(
              "heap retained by %d subscriptions of %d keys (estimated %s bytes)",
              accepted, KEYS, used)
          .isLessThan(BUDGET);
      assertThat(metric("fieldline_ws_commands_rejected_total{reason=\"memory_budget\""))
          .isEqualTo(refusedForMemory);
    } finally {
      sessions.forEach(WsTestClient::close);
    }
    await("every subscription's share given back")
        .atMost(Duration.ofSeconds(10))
        .until(() -> metric("fieldline_ws_memory_used ") == 0);
  }

  @Test
  void should_close_a_client_that_never_reads_before_it_holds_more_than_max_queued_bytes()
      throws IOException {
    Device device = device();
    double slowBefore = metric("fieldline_ws_sessions_closed_total{reason=\"slow\"");
    try (Socket socket = new Socket()) {
      socket.setReceiveBufferSize(4096);
      socket.setSoTimeout(20_000);
      socket.connect(new InetSocketAddress("127.0.0.1", server.httpPort()));
      OutputStream out = socket.getOutputStream();
      DataInputStream in = new DataInputStream(socket.getInputStream());
      upgrade(out, in, "/api/ws/plugins/telemetry?token=" + token);
      sendText(
          out,
          "{\"tsSubCmds\":[{\"cmdId\":1,\"entityType\":\"DEVICE\",\"entityId\":\""
              + device.id()
              + "\",\"keys\":\"v\",\"scope\":\"LATEST_TELEMETRY\"}]}");
      await().until(() -> metric("fieldline_ws_subscriptions ") == 1);

      // Large updates, partly of three bytes a character as framed (one Java char each): 56,000
      // bytes, 52,000 characters a value.
      String value = "€".repeat(2_000) + "x".repeat(50_000);
      Mqtt3BlockingClient mqtt = connectedDevice(device);
      int published = 0;
      double mostQueued = 0;
      while (metric("fieldline_ws_sessions_closed_total{reason=\"slow\"") == slowBefore) {
        mostQueued = Math.max(mostQueued, metric("fieldline_ws_memory_used "));
        assertThat(published).as("values published before the client was closed").isLessThan(400);
        publish(mqtt, "v1/devices/me/telemetry", "{\"v\":\"" + value + published + "\"}");
        published++;
      }
      mqtt.disconnect();
      bystander.publishesAndAllStored();
      // The gauge also holds the subscription's own estimate (2,292 bytes).
      assertThat(mostQueued)
          .as("bytes queued for the client")
          .isLessThanOrEqualTo(MAX_QUEUED_BYTES + 4096);

      // Everything the server had taken for this client arrives now, then the close frame.
      socket.setSoTimeout(5_000);
      long received = 0;
      int closeCode = -1;
      try {
        while (true) {
          int opcode = in.readUnsignedByte() & 0x0f;
          int length = in.readUnsignedByte() & 0x7f;
          long size =
              length == 126 ? in.readUnsignedShort() : length == 127 ? in.readLong() : length;
          byte[] payload = in.readNBytes((int) size);
          received += 2 + size;
          if (opcode == 0x8) {
            closeCode = payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 0;
            break;
          }
        }
      } catch (EOFException | SocketException | SocketTimeoutException end) {
        // The server closed (or reset) the connection without a close frame.
      }
      // The queue is dropped at the close: the client gets what Pekko and the kernel had taken
      // (Linux grows the server's send buffer past the 4 KiB asked for): about 280 KB here, and
      // 450 KB when Pekko held whole updates instead of parts of 4,096 characters.
      assertThat(received).isLessThanOrEqualTo(MAX_QUEUED_BYTES + 128 * 1024);
      assertThat(closeCode).as("close frame status (Pekko's only one)").isIn(-1, 1000);
    }
  }

  @Test
  void should_count_and_answer_a_message_over_the_size_limit_as_too_large() {
    double tooLarge = metric("fieldline_ws_sessions_closed_total{reason=\"message_too_large\"");
    double client = metric("fieldline_ws_sessions_closed_total{reason=\"client\"");
    try (WsTestClient ws = authenticated()) {
      ws.send("{\"cmds\":[],\"pad\":\"" + "x".repeat(MAX_MESSAGE) + "\"}");
      JsonNode told = ws.nextAny();
      assertThat(told.path("errorCode").asInt()).isEqualTo(2);
      assertThat(told.path("errorMsg").asText()).contains("Message too large");
      assertThat(ws.awaitClosed()).isTrue();
      assertThat(ws.closeCode()).as("Pekko's only close status").isEqualTo(1000);
    }
    await()
        .until(
            () ->
                metric("fieldline_ws_sessions_closed_total{reason=\"message_too_large\"")
                    == tooLarge + 1);
    assertThat(metric("fieldline_ws_sessions_closed_total{reason=\"client\"")).isEqualTo(client);
  }

  @Test
  void should_log_at_most_one_line_when_a_flood_of_logins_fails() {
    // Every line this JVM logs meanwhile, by level (Micrometer's Logback binder): no log text read.
    SimpleMeterRegistry lines = new SimpleMeterRegistry();
    LogbackMetrics logged = new LogbackMetrics();
    logged.bindTo(lines);
    double failed = metric("fieldline_ws_sessions_closed_total{reason=\"auth_failed\"");
    try {
      for (int i = 0; i < 20; i++) {
        try (WsTestClient ws =
            WsTestClient.open(URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws"))) {
          ws.send("{\"authCmd\":{\"cmdId\":0,\"token\":\"not-a-jwt-" + i + "\"}}");
          JsonNode refused = ws.nextAny();
          assertThat(refused.path("errorCode").asInt()).isEqualTo(3);
          assertThat(refused.path("errorMsg").asText()).isEqualTo("Unauthorized");
          assertThat(ws.awaitClosed()).isTrue();
        }
      }
      await()
          .until(
              () ->
                  metric("fieldline_ws_sessions_closed_total{reason=\"auth_failed\"")
                      == failed + 20);
    } finally {
      logged.close();
    }
    double count =
        lines.find("logback.events").counters().stream().mapToDouble(Counter::count).sum();
    // One line, or none if an earlier one of the kind went out less than 10 s ago.
    assertThat(count).as("lines logged for 20 failed logins").isLessThanOrEqualTo(1);
  }

  /** The WebSocket handshake over a raw socket (RFC 6455 §4.1), reading the 101 answer. */
  private static void upgrade(OutputStream out, InputStream in, String path) throws IOException {
    byte[] nonce = new byte[16];
    ThreadLocalRandom.current().nextBytes(nonce);
    String request =
        "GET "
            + path
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: "
            + Base64.getEncoder().encodeToString(nonce)
            + "\r\nSec-WebSocket-Version: 13\r\n\r\n";
    out.write(request.getBytes(StandardCharsets.US_ASCII));
    out.flush();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      assertThat(b).as("the handshake answer").isNotNegative();
      head.write(b);
    }
    assertThat(head.toString(StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 101");
  }

  /** One masked text frame (a client's frames are masked, RFC 6455 §5.3). */
  private static void sendText(OutputStream out, String text) throws IOException {
    byte[] payload = text.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    frame.write(0x81);
    if (payload.length < 126) {
      frame.write(0x80 | payload.length);
    } else {
      frame.write(0x80 | 126);
      frame.write(payload.length >>> 8);
      frame.write(payload.length & 0xff);
    }
    byte[] mask = new byte[4];
    ThreadLocalRandom.current().nextBytes(mask);
    frame.write(mask);
    for (int i = 0; i < payload.length; i++) {
      frame.write(payload[i] ^ mask[i % 4]);
    }
    out.write(frame.toByteArray());
    out.flush();
  }
}
