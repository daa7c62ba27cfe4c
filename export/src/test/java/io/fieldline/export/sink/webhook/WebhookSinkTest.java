package io.fieldline.export.sink.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fieldline.common.DeviceId;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.export.ExportRecord;
import io.fieldline.export.RecordJson;
import io.fieldline.export.sink.Delivery;
import io.fieldline.export.sink.Sink;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The webhook sink against a real HTTP receiver (the JDK's server) on 127.0.0.1. */
class WebhookSinkTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String SECRET = "s3cret-for-the-receiver-only";

  /** What the receiver answers, one per request; a blocked answer waits for {@link #release}. */
  private record Answer(int status, byte[] body, boolean blocked) {
    static Answer of(int status, String body) {
      return new Answer(status, body.getBytes(StandardCharsets.UTF_8), false);
    }
  }

  private record Received(Headers headers, byte[] body) {}

  private final ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
  private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
  private final CountDownLatch release = new CountDownLatch(1);
  private final List<Sink> sinks = new ArrayList<>();
  private final RecordJson recordJson = new RecordJson();
  private ExecutorService serverThreads;
  private HttpServer server;

  @BeforeEach
  void startReceiver() throws IOException {
    serverThreads = Executors.newCachedThreadPool();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.setExecutor(serverThreads);
    server.createContext("/", this::answer);
    server.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    sinks.forEach(Sink::close);
    server.stop(0);
    serverThreads.shutdownNow();
  }

  private void answer(HttpExchange exchange) throws IOException {
    try (exchange) {
      received.add(
          new Received(exchange.getRequestHeaders(), exchange.getRequestBody().readAllBytes()));
      Answer answer = answers.poll();
      if (answer == null) {
        answer = Answer.of(200, "");
      }
      if (answer.blocked()) {
        release.await(10, TimeUnit.SECONDS);
      }
      if (answer.status() == 301) {
        exchange.getResponseHeaders().add("Location", url("/moved"));
      }
      exchange.sendResponseHeaders(
          answer.status(), answer.body().length == 0 ? -1 : answer.body().length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(answer.body());
      }
    } catch (IOException | InterruptedException e) {
      // The sink hung up (timeout, cut-off answer): nothing to answer anymore.
    }
  }

  @Test
  void should_post_a_signed_json_array_when_the_receiver_answers_200() throws Exception {
    List<ExportRecord> batch = batch(3);
    Sink sink = sink(url("/hook"), "{\"X-Tenant\":\"acme\"}", 10_000);

    Delivery delivery = await(sink.deliver(batch));

    assertThat(delivery).isInstanceOf(Delivery.Delivered.class);
    Received request = received.poll(5, TimeUnit.SECONDS);
    assertThat(request).isNotNull();
    String expectedBody =
        "["
            + new String(batch.get(0).json(), StandardCharsets.UTF_8)
            + ","
            + new String(batch.get(1).json(), StandardCharsets.UTF_8)
            + ","
            + new String(batch.get(2).json(), StandardCharsets.UTF_8)
            + "]";
    assertThat(new String(request.body(), StandardCharsets.UTF_8)).isEqualTo(expectedBody);
    JsonNode array = MAPPER.readTree(request.body());
    assertThat(array.isArray()).isTrue();
    assertThat(array).hasSize(3);
    assertThat(request.headers().getFirst("X-Fieldline-Signature"))
        .isEqualTo("sha256=" + hmacHex(SECRET, request.body()));
    assertThat(request.headers().getFirst("Content-Type")).isEqualTo("application/json");
    assertThat(request.headers().getFirst("X-Fieldline-Sink")).isEqualTo("to-receiver %C3%BC");
    assertThat(request.headers().getFirst("X-Fieldline-Records")).isEqualTo("3");
    assertThat(request.headers().getFirst("X-Fieldline-Batch")).matches("[0-9a-f]{32}");
    assertThat(request.headers().getFirst("X-Tenant")).isEqualTo("acme");
  }

  @Test
  void should_retry_then_deliver_when_the_receiver_fails_then_recovers() throws Exception {
    answers.add(Answer.of(500, "boom\nwith a second line"));
    answers.add(Answer.of(200, "{\"ok\":true}"));
    List<ExportRecord> batch = batch(2);
    Sink sink = sink(url("/hook"), "{}", 10_000);

    Delivery first = await(sink.deliver(batch));
    Delivery second = await(sink.deliver(batch));

    assertThat(first).isEqualTo(new Delivery.Retry("HTTP 500: boom with a second line"));
    assertThat(second).isInstanceOf(Delivery.Delivered.class);
    Received one = received.poll(5, TimeUnit.SECONDS);
    Received two = received.poll(5, TimeUnit.SECONDS);
    assertThat(one).isNotNull();
    assertThat(two).isNotNull();
    assertThat(two.body()).isEqualTo(one.body());
    assertThat(two.headers().getFirst("X-Fieldline-Batch"))
        .isEqualTo(one.headers().getFirst("X-Fieldline-Batch"));
  }

  @Test
  void should_retry_when_the_receiver_answers_429_or_408() throws Exception {
    answers.add(Answer.of(429, "slow down"));
    answers.add(Answer.of(408, ""));
    Sink sink = sink(url("/hook"), "{}", 10_000);

    assertThat(await(sink.deliver(batch(1)))).isEqualTo(new Delivery.Retry("HTTP 429: slow down"));
    assertThat(await(sink.deliver(batch(1)))).isEqualTo(new Delivery.Retry("HTTP 408"));
  }

  @Test
  void should_reject_with_the_body_as_sent_when_the_receiver_answers_400() throws Exception {
    answers.add(Answer.of(400, "record 2 has no temperature"));
    List<ExportRecord> batch = batch(2);
    Sink sink = sink(url("/hook"), "{}", 10_000);

    Delivery delivery = await(sink.deliver(batch));

    Received request = received.poll(5, TimeUnit.SECONDS);
    assertThat(request).isNotNull();
    assertThat(delivery)
        .isEqualTo(
            new Delivery.Rejected(
                400,
                "HTTP 400: record 2 has no temperature",
                new String(request.body(), StandardCharsets.UTF_8)));
  }

  @Test
  void should_retry_without_following_when_the_receiver_redirects() throws Exception {
    answers.add(Answer.of(301, ""));
    Sink sink = sink(url("/hook"), "{}", 10_000);

    Delivery delivery = await(sink.deliver(batch(1)));

    assertThat(delivery).isInstanceOf(Delivery.Retry.class);
    assertThat(((Delivery.Retry) delivery).error())
        .isEqualTo("HTTP 301: redirects are not followed (Location: " + url("/moved") + ")");
    assertThat(received).hasSize(1);
  }

  @Test
  void should_quote_only_the_start_when_the_answer_is_huge() throws Exception {
    byte[] huge = "x".repeat(4 << 20).getBytes(StandardCharsets.UTF_8);
    answers.add(new Answer(503, huge, false));
    Sink sink = sink(url("/hook"), "{}", 10_000);

    Delivery delivery = await(sink.deliver(batch(1)));

    assertThat(delivery).isEqualTo(new Delivery.Retry("HTTP 503: " + "x".repeat(200)));
  }

  @Test
  void should_retry_in_bounded_time_when_the_receiver_is_slower_than_the_timeout()
      throws Exception {
    answers.add(new Answer(200, new byte[0], true));
    Sink sink = sink(url("/hook"), "{}", 300);

    long start = System.nanoTime();
    Delivery delivery = await(sink.deliver(batch(1)));
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(delivery).isEqualTo(new Delivery.Retry("timed out after 300 ms"));
    assertThat(tookMs).isBetween(250L, 3_000L);
  }

  @Test
  void should_retry_when_the_receiver_closes_the_connection_without_answering() throws Exception {
    try (ServerSocket closer = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                try (Socket socket = closer.accept()) {
                  InputStream in = socket.getInputStream();
                  in.read(new byte[1024]); // the request has arrived; hang up without answering
                } catch (IOException e) {
                  // closed by the test
                }
              });
      acceptor.start();
      Sink sink = sink("http://127.0.0.1:" + closer.getLocalPort() + "/hook", "{}", 5_000);

      Delivery delivery = await(sink.deliver(batch(1)));

      assertThat(delivery).isInstanceOf(Delivery.Retry.class);
      assertThat(((Delivery.Retry) delivery).error()).startsWith("connection failed or closed");
      acceptor.join(5_000);
    }
  }

  @Test
  void should_retry_when_the_connection_is_refused() throws Exception {
    int port;
    try (ServerSocket unused = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = unused.getLocalPort();
    }
    Sink sink = sink("http://127.0.0.1:" + port + "/hook", "{}", 5_000);

    assertThat(await(sink.deliver(batch(1)))).isEqualTo(new Delivery.Retry("connection refused"));
  }

  @Test
  void should_retry_at_once_when_closed_during_a_delivery() throws Exception {
    answers.add(new Answer(200, new byte[0], true));
    Sink sink = sink(url("/hook"), "{}", 10_000);
    CompletionStage<Delivery> inFlight = sink.deliver(batch(1));
    assertThat(received.poll(5, TimeUnit.SECONDS)).isNotNull();

    Delivery concurrent = await(sink.deliver(batch(1)));
    sink.close();

    assertThat(concurrent)
        .isEqualTo(new Delivery.Retry("another delivery of this sink is in flight"));
    assertThat(await(inFlight)).isEqualTo(new Delivery.Retry("sink closed"));
    assertThat(await(sink.deliver(batch(1)))).isEqualTo(new Delivery.Retry("sink closed"));
  }

  @Test
  void should_cut_the_dead_letter_body_between_characters_when_it_is_over_64_kib() {
    byte[] body = ("[" + "ü".repeat(40_000) + "]").getBytes(StandardCharsets.UTF_8);

    String kept = WebhookSink.deadLetterBody(body);

    assertThat(kept.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(64 * 1024);
    assertThat(kept).startsWith("[ü").doesNotContain("\uFFFD");
    assertThat(kept.length()).isEqualTo(1 + (64 * 1024 - 1) / 2);
  }

  private Sink sink(String url, String headers, int timeoutMs) throws Exception {
    ObjectNode configuration =
        (ObjectNode)
            MAPPER.readTree(
                "{\"url\":\""
                    + url
                    + "\",\"secret\":\""
                    + SECRET
                    + "\",\"headers\":"
                    + headers
                    + ",\"timeoutMs\":"
                    + timeoutMs
                    + "}");
    WebhookSinkFactory factory = new WebhookSinkFactory();
    Sink sink =
        factory.create(UUID.randomUUID(), "to-receiver ü", factory.validate(configuration, null));
    sinks.add(sink);
    return sink;
  }

  private String url(String path) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  private List<ExportRecord> batch(int records) {
    List<TsKvEntry> values = new ArrayList<>();
    for (int i = 0; i < records; i++) {
      values.add(new TsKvEntry(1_000 + i, KvEntry.of("temperature", 20.0 + i)));
    }
    FeedEntry entry = new FeedEntry.Telemetry(1, 1_722_500_000_000_000L, DeviceId.random(), values);
    return recordJson.records(entry, "boiler-7", "boiler", RecordJson.storedAt(entry));
  }

  private static Delivery await(CompletionStage<Delivery> stage) throws Exception {
    return stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  private static String hmacHex(String secret, byte[] body) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return HexFormat.of().formatHex(mac.doFinal(body));
  }
}
