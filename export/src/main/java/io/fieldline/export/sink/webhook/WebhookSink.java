package io.fieldline.export.sink.webhook;

import io.fieldline.export.ExportRecord;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.Delivery;
import io.fieldline.export.sink.Sink;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers batches to one webhook: each batch is one HTTP/1.1 POST of a JSON array holding the
 * records' JSON documents in batch order, with these headers:
 *
 * <ul>
 *   <li>{@code Content-Type: application/json};
 *   <li>{@code X-Fieldline-Signature: sha256=<hex>}: the lowercase hex HMAC-SHA256 of the exact
 *       body bytes, keyed with the secret's UTF-8 bytes; a receiver recomputes it and compares in
 *       constant time;
 *   <li>{@code X-Fieldline-Sink}: the sink's name, with {@code %} and every byte of its UTF-8 form
 *       outside printable ASCII percent-encoded;
 *   <li>{@code X-Fieldline-Batch}: the first 32 hex digits of the body's SHA-256. A batch retried
 *       unchanged carries the same value, so a receiver may drop a repeat of a batch it took; the
 *       exact de-duplication key of a record stays its {@code deviceId} and {@code seq}, since a
 *       batch can be cut differently after a restart or replay;
 *   <li>{@code X-Fieldline-Records}: how many records the array holds;
 *   <li>the configured extra {@code headers}.
 * </ul>
 *
 * <p>Outcomes: 2xx is {@link Delivery.Delivered}. 408, 429, 5xx, a timeout, a refused, reset or
 * closed connection, a TLS failure are {@link Delivery.Retry}. 3xx is a {@link Delivery.Retry} too:
 * redirects are not followed (a signed batch goes only where it was configured to), and a moved
 * endpoint is a configuration problem, not a bad batch, so the records stay in the feed until an
 * operator fixes the URL instead of filling the dead letters. Every other 4xx is {@link
 * Delivery.Rejected}, with the body as sent cut to 64 KiB. At most 4 KiB of any answer's body are
 * read (a longer one is cut off and its connection closed); its first 200 characters go into the
 * error text ({@code "HTTP 503: <body>"}).
 *
 * <p>Threading: the exporter calls {@link #deliver} one batch at a time; the body is built, signed
 * and sent on the sink's own two threads (named {@code fieldline-webhook-<n>}, idle ones ended
 * after 30 s) and the JDK client's selector thread, so the caller never waits. One batch in flight
 * bounds the sink's memory by one batch plus 4 KiB. The stage completes on one of those threads, on
 * the JDK's {@code CompletableFuture} timer thread (timeout) or in {@link #close}: callers that
 * touch their own state hop to their own executor.
 */
public final class WebhookSink implements Sink {

  private static final Logger LOG = LoggerFactory.getLogger(WebhookSink.class);

  static final String SIGNATURE_HEADER = "X-Fieldline-Signature";
  static final String SINK_HEADER = "X-Fieldline-Sink";
  static final String BATCH_HEADER = "X-Fieldline-Batch";
  static final String RECORDS_HEADER = "X-Fieldline-Records";

  /** Bytes of an answer's body read at most. */
  static final int ANSWER_BYTES = 4096;

  /** Characters of an answer's body quoted in an error. */
  static final int ANSWER_CHARS = 200;

  /** Bytes of a rejected batch kept in its dead letter. */
  static final int DEAD_LETTER_BYTES = 64 * 1024;

  private static final AtomicInteger SINKS = new AtomicInteger();
  private static final CompletableFuture<Delivery> IDLE =
      CompletableFuture.completedFuture(Delivery.DELIVERED);

  private final String name;
  private final WebhookConfig config;
  private final SecretKeySpec key;
  private final String sinkHeader;
  private final ThreadPoolExecutor executor;
  private final HttpClient client;

  /** The delivery in progress, or the last one; guarded by {@code this}. */
  private CompletableFuture<Delivery> current = IDLE;

  private volatile boolean closed;

  WebhookSink(String name, WebhookConfig config) {
    this.name = name;
    this.config = config;
    this.key = new SecretKeySpec(config.secret().getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    this.sinkHeader = headerSafe(name);
    String threadPrefix = "fieldline-webhook-" + SINKS.incrementAndGet() + "-";
    AtomicInteger threads = new AtomicInteger();
    // Unbounded queue, bounded in practice: it holds the client's tasks of one exchange at a time.
    this.executor =
        new ThreadPoolExecutor(
            2,
            2,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            runnable -> {
              Thread thread = new Thread(runnable, threadPrefix + threads.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    executor.allowCoreThreadTimeOut(true);
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofMillis(config.timeoutMs()))
            .executor(executor)
            .build();
  }

  @Override
  public Batching batching() {
    return config.batching();
  }

  @Override
  public CompletionStage<Delivery> deliver(List<ExportRecord> batch) {
    CompletableFuture<Delivery> result = new CompletableFuture<>();
    synchronized (this) {
      if (closed) {
        return CompletableFuture.completedFuture(new Delivery.Retry("sink closed"));
      }
      if (!current.isDone()) {
        return CompletableFuture.completedFuture(
            new Delivery.Retry("another delivery of this sink is in flight"));
      }
      current = result;
    }
    result.completeOnTimeout(
        new Delivery.Retry("timed out after " + duration(config.timeoutMs())),
        config.timeoutMs(),
        TimeUnit.MILLISECONDS);
    try {
      executor.execute(() -> send(batch, result));
    } catch (RejectedExecutionException e) {
      result.complete(new Delivery.Retry("sink closed"));
    }
    return result.minimalCompletionStage();
  }

  /**
   * Completes a delivery in progress with {@link Delivery.Retry} (aborting its exchange) and ends
   * the sink's threads; later deliveries answer {@link Delivery.Retry} at once.
   */
  @Override
  public void close() {
    CompletableFuture<Delivery> inFlight;
    synchronized (this) {
      closed = true;
      inFlight = current;
    }
    inFlight.complete(new Delivery.Retry("sink closed"));
    executor.shutdownNow();
  }

  private void send(List<ExportRecord> batch, CompletableFuture<Delivery> result) {
    try {
      if (closed || result.isDone()) {
        result.complete(new Delivery.Retry("sink closed"));
        return;
      }
      byte[] body = body(batch);
      HttpRequest.Builder request =
          HttpRequest.newBuilder(config.url())
              .timeout(Duration.ofMillis(config.timeoutMs()))
              .header("Content-Type", "application/json")
              .header(SIGNATURE_HEADER, "sha256=" + HexFormat.of().formatHex(sign(body)))
              .header(SINK_HEADER, sinkHeader)
              .header(BATCH_HEADER, batchId(body))
              .header(RECORDS_HEADER, Integer.toString(batch.size()));
      config.headers().forEach(request::header);
      CompletableFuture<HttpResponse<byte[]>> exchange =
          client.sendAsync(
              request.POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
              info -> new BoundedBody(ANSWER_BYTES));
      // A timeout or close() completes the result first: abort the exchange then.
      result.whenComplete((delivery, error) -> exchange.cancel(true));
      exchange.whenComplete(
          (response, error) ->
              result.complete(
                  error == null ? answered(response, body) : failed(error, batch.size())));
    } catch (RuntimeException | GeneralSecurityException e) {
      LOG.warn("[webhook|{}] could not send a batch", name, e);
      result.complete(new Delivery.Retry("could not send: " + e));
    }
  }

  private Delivery answered(HttpResponse<byte[]> response, byte[] sent) {
    int status = response.statusCode();
    if (status >= 200 && status < 300) {
      return Delivery.DELIVERED;
    }
    String error = "HTTP " + status;
    String answer = quote(response.body());
    if (!answer.isEmpty()) {
      error += ": " + answer;
    }
    if (status >= 300 && status < 400) {
      String location = response.headers().firstValue("Location").orElse("");
      error = "HTTP " + status + ": redirects are not followed (Location: " + location + ")";
    } else if (status >= 400 && status < 500 && status != 408 && status != 429) {
      LOG.debug("[webhook|{}] batch rejected: {}", name, error);
      return new Delivery.Rejected(status, error, deadLetterBody(sent));
    }
    LOG.debug("[webhook|{}] batch to retry: {}", name, error);
    return new Delivery.Retry(error);
  }

  private Delivery failed(Throwable error, int records) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    String why;
    if (cause instanceof HttpConnectTimeoutException) {
      why = "connect timed out after " + duration(config.timeoutMs());
    } else if (cause instanceof HttpTimeoutException) {
      why = "timed out after " + duration(config.timeoutMs());
    } else if (cause instanceof ConnectException) {
      why = connectFailure(cause);
    } else if (cause instanceof SSLException) {
      why = "TLS failed: " + cause.getMessage();
    } else if (cause instanceof IOException) {
      why = "connection failed or closed: " + String.valueOf(cause.getMessage());
    } else if (cause instanceof CancellationException) {
      why = "cancelled";
    } else {
      LOG.warn("[webhook|{}] unexpected failure sending {} records", name, records, cause);
      why = "unexpected failure: " + cause;
    }
    LOG.debug("[webhook|{}] batch to retry: {}", name, why);
    return new Delivery.Retry(why);
  }

  private String connectFailure(Throwable error) {
    String said = null;
    for (Throwable cause = error; cause != null; cause = cause.getCause()) {
      if (cause instanceof UnresolvedAddressException) {
        return "unknown host " + config.url().getHost();
      }
      if (said == null && cause.getMessage() != null) {
        said = cause.getMessage();
      }
    }
    // JDK 17's client reports a refused connection as a ConnectException without a message (its
    // cause is a bare ClosedChannelException); other connect failures say what they are.
    if (said == null || said.toLowerCase(Locale.ROOT).contains("refused")) {
      return "connection refused";
    }
    return "could not connect: " + said;
  }

  /** The records' JSON documents as one JSON array. */
  static byte[] body(List<ExportRecord> batch) {
    int size = 2 + Math.max(0, batch.size() - 1);
    for (ExportRecord record : batch) {
      size += record.json().length;
    }
    byte[] body = new byte[size];
    int at = 0;
    body[at++] = '[';
    for (ExportRecord record : batch) {
      if (at > 1) {
        body[at++] = ',';
      }
      byte[] json = record.json();
      System.arraycopy(json, 0, body, at, json.length);
      at += json.length;
    }
    body[at] = ']';
    return body;
  }

  private byte[] sign(byte[] body) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(key);
    return mac.doFinal(body);
  }

  private static String batchId(byte[] body) throws GeneralSecurityException {
    byte[] digest = MessageDigest.getInstance("SHA-256").digest(body);
    return HexFormat.of().formatHex(digest, 0, 16);
  }

  /** At most {@link #ANSWER_CHARS} characters of an answer, on one line. */
  static String quote(byte[] answer) {
    String text = new String(answer, StandardCharsets.UTF_8).strip();
    int end = Math.min(text.length(), ANSWER_CHARS);
    if (end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    StringBuilder quoted = new StringBuilder(end);
    for (int i = 0; i < end; i++) {
      char c = text.charAt(i);
      quoted.append(Character.isISOControl(c) ? ' ' : c);
    }
    return quoted.toString();
  }

  /** A batch as its dead letter keeps it: at most {@link #DEAD_LETTER_BYTES}, whole characters. */
  static String deadLetterBody(byte[] body) {
    int end = Math.min(body.length, DEAD_LETTER_BYTES);
    if (end < body.length) {
      // Do not split a UTF-8 sequence: step back over continuation bytes (10xxxxxx).
      while (end > 0 && (body[end] & 0xC0) == 0x80) {
        end--;
      }
    }
    return new String(body, 0, end, StandardCharsets.UTF_8);
  }

  /** A header value: {@code %} and bytes outside printable ASCII (and space) percent-encoded. */
  static String headerSafe(String text) {
    StringBuilder safe = new StringBuilder(text.length());
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xFF;
      if (c >= 0x20 && c < 0x7F && c != '%') {
        safe.append((char) c);
      } else {
        safe.append('%').append(HexFormat.of().withUpperCase().toHexDigits((byte) c));
      }
    }
    return safe.toString();
  }

  private static String duration(int millis) {
    return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
  }
}
