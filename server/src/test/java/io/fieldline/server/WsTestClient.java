package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.java_websocket.client.WebSocketClient;
import org.java_websocket.handshake.ServerHandshake;

/**
 * A WebSocket client of the telemetry API for tests, on Java-WebSocket (a client we did not write):
 * collects every message the server sends, in order, and how the connection ended. {@link
 * #stopReading()} blocks its read thread, for a client that stops reading its socket.
 */
public final class WsTestClient extends WebSocketClient implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long WAIT_SECONDS = 20;

  private final BlockingQueue<JsonNode> received = new LinkedBlockingQueue<>();
  private final List<JsonNode> skipped = new ArrayList<>();
  private final CountDownLatch closed = new CountDownLatch(1);
  private final CountDownLatch readGate = new CountDownLatch(1);
  private volatile boolean reading = true;
  private volatile int closeCode;
  private volatile String closeReason = "";

  private WsTestClient(URI uri) {
    super(uri);
  }

  /** Connects to {@code uri}; false (and a recorded close) if the handshake was refused. */
  public static WsTestClient open(URI uri) {
    WsTestClient client = new WsTestClient(uri);
    try {
      client.connectBlocking(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return client;
  }

  @Override
  public void onOpen(ServerHandshake handshake) {}

  @Override
  public void onMessage(String message) {
    if (!reading) {
      try {
        readGate.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      received.add(JSON.readTree(message));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void onClose(int code, String reason, boolean remote) {
    closeCode = code;
    closeReason = reason;
    closed.countDown();
  }

  @Override
  public void onError(Exception e) {}

  /** The next message of subscription {@code id}; others are kept for {@link #nextAny}. */
  public JsonNode next(int subscriptionId) {
    for (Iterator<JsonNode> it = skipped.iterator(); it.hasNext(); ) {
      JsonNode kept = it.next();
      if (kept.path("subscriptionId").asInt() == subscriptionId) {
        it.remove();
        return kept;
      }
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (true) {
      JsonNode message = poll(deadline - System.nanoTime());
      assertThat(message)
          .as("an update of subscription %d (others received: %s)", subscriptionId, skipped)
          .isNotNull();
      if (message.path("subscriptionId").asInt() == subscriptionId) {
        return message;
      }
      skipped.add(message);
    }
  }

  /** The next message, whatever its subscription. */
  public JsonNode nextAny() {
    if (!skipped.isEmpty()) {
      return skipped.remove(0);
    }
    JsonNode message = poll(TimeUnit.SECONDS.toNanos(WAIT_SECONDS));
    assertThat(message).as("a message from the server").isNotNull();
    return message;
  }

  /** Messages received and not yet taken. */
  public List<JsonNode> pending() {
    List<JsonNode> all = new ArrayList<>(skipped);
    all.addAll(received);
    return all;
  }

  private JsonNode poll(long nanos) {
    try {
      return received.poll(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Blocks the read thread at the next message: the socket is no longer read. */
  public void stopReading() {
    reading = false;
  }

  public void resumeReading() {
    reading = true;
    readGate.countDown();
  }

  /** Whether the connection ended within the wait. */
  public boolean awaitClosed() {
    try {
      return closed.await(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public int closeCode() {
    return closeCode;
  }

  public String closeReason() {
    return closeReason;
  }
}
