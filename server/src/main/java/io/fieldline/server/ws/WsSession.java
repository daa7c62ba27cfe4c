package io.fieldline.server.ws;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.HistoryQuery;
import io.fieldline.common.SortOrder;
import io.fieldline.common.TsKvEntry;
import io.fieldline.server.rest.JwtTokens;
import io.fieldline.server.ws.WsUpdate.ErrorCode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.QueueOfferResult;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One WebSocket connection of the telemetry API: authenticates it, runs its commands, and writes
 * their updates to a bounded queue in front of the socket.
 *
 * <p>Commands arrive one message at a time ({@link #onText}, from the connection's stream). Updates
 * come from any thread and are offered to the queue; when the client reads so slowly that {@code
 * max-queued-updates} are waiting, the session is closed ({@link CloseReason#SLOW}) rather than
 * buffering more. Every way a session ends goes through {@link #close}, which releases its
 * subscriptions and its user's session slot exactly once.
 */
final class WsSession {

  private static final Logger LOG = LoggerFactory.getLogger(WsSession.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Why a session ended (a metric tag). */
  enum CloseReason {
    CLIENT,
    SLOW,
    IDLE,
    AUTH_FAILED,
    AUTH_TIMEOUT,
    TOO_MANY_SESSIONS,
    MESSAGE_TOO_LARGE,
    SERVER_STOPPING
  }

  private final WsSessions hub;
  private final BoundedSourceQueue<String> out;
  private final String remote;
  private final Map<Integer, LiveSubscription> subscriptions = new ConcurrentHashMap<>();
  private volatile @Nullable String user;
  private volatile boolean closed;

  /**
   * @param user the authenticated user (the legacy path checks its {@code ?token=} before the
   *     upgrade), or null until an {@code authCmd} arrives
   */
  WsSession(WsSessions hub, BoundedSourceQueue<String> out, String remote, @Nullable String user) {
    this.hub = hub;
    this.out = out;
    this.remote = remote;
    this.user = user;
  }

  /** Admits a session authenticated before the upgrade; false if it was refused and closed. */
  boolean admit() {
    String current = user;
    if (current != null && !hub.admit(current)) {
      user = null; // no slot was taken: nothing to release
      refuseTooMany(0, current);
      return false;
    }
    return true;
  }

  boolean authenticated() {
    return user != null;
  }

  /** Handles one client message. Never throws: every problem is answered with an error update. */
  void onText(String text) {
    if (closed) {
      return;
    }
    JsonNode message;
    try {
      message = MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      message = null;
    }
    if (message == null || !message.isObject()) {
      hub.metrics().rejected("malformed");
      send(
          WsUpdate.error(
              0, ErrorCode.BAD_REQUEST, "Failed to parse the message: not a JSON object"));
      return;
    }
    if (message.has("authCmd") && !authenticate(message.path("authCmd"))) {
      return;
    }
    if (user == null) {
      close(
          CloseReason.AUTH_FAILED,
          WsUpdate.error(0, ErrorCode.UNAUTHORIZED, "Authenticate first: send an authCmd"));
      return;
    }
    WsCommand.Batch batch = WsCommand.parse(message);
    for (WsCommand.Bad bad : batch.bad()) {
      hub.metrics().rejected("bad_command");
      LOG.debug("[ws|{}] bad command {}: {}", remote, bad.cmdId(), bad.reason());
      send(WsUpdate.error(bad.cmdId(), ErrorCode.BAD_REQUEST, bad.reason()));
    }
    batch.commands().forEach(this::run);
  }

  private boolean authenticate(JsonNode authCmd) {
    int cmdId = authCmd.path("cmdId").asInt(0);
    if (user != null) {
      return true; // already authenticated (e.g. the legacy path): a second authCmd changes nothing
    }
    Optional<String> verified =
        hub.tokens().verify(authCmd.path("token").asText(""), JwtTokens.Kind.ACCESS);
    if (verified.isEmpty()) {
      LOG.info("[ws|{}] authentication failed: invalid or expired token", remote);
      close(CloseReason.AUTH_FAILED, WsUpdate.error(cmdId, ErrorCode.UNAUTHORIZED, "Unauthorized"));
      return false;
    }
    if (!hub.admit(verified.get())) {
      refuseTooMany(cmdId, verified.get());
      return false;
    }
    user = verified.get();
    return true;
  }

  private void refuseTooMany(int cmdId, String who) {
    LOG.info(
        "[ws|{}] refused: {} already has {} sessions",
        remote,
        who,
        hub.config().maxSessionsPerUser());
    close(
        CloseReason.TOO_MANY_SESSIONS,
        WsUpdate.error(
            cmdId,
            ErrorCode.BAD_REQUEST,
            "Too many sessions: at most " + hub.config().maxSessionsPerUser() + " per user"));
  }

  private void run(WsCommand command) {
    if (command.unsubscribe()) {
      LiveSubscription gone = subscriptions.remove(command.cmdId());
      if (gone != null) {
        gone.close();
        hub.metrics().subscriptionClosed();
      }
      return;
    }
    if (command.type() == WsCommand.Type.TIMESERIES_HISTORY) {
      history(command);
      return;
    }
    LiveSubscription replaced = subscriptions.get(command.cmdId());
    if (replaced == null && subscriptions.size() >= hub.config().maxSubscriptionsPerSession()) {
      hub.metrics().rejected("too_many_subscriptions");
      send(
          WsUpdate.error(
              command.cmdId(),
              ErrorCode.BAD_REQUEST,
              "Too many subscriptions: at most "
                  + hub.config().maxSubscriptionsPerSession()
                  + " per session"));
      return;
    }
    LiveSubscription subscription =
        new LiveSubscription(
            command,
            this::send,
            () -> close(CloseReason.SLOW, null),
            hub.config().maxQueuedUpdates());
    if (replaced != null) {
      // ThingsBoard's rule: a command with the id of a live subscription replaces it.
      replaced.close();
      hub.metrics().subscriptionClosed();
    }
    subscriptions.put(command.cmdId(), subscription);
    hub.metrics().subscriptionOpened();
    DeviceId device = command.device();
    hub.registry()
        .findById(device)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                throw new IllegalArgumentException("Device " + device + " not found");
              }
              // Listening starts before the read: nothing stored in between is missed.
              subscription.registered(hub.live().watch(device, subscription));
              return current(command);
            })
        .whenComplete(
            (current, failure) -> {
              if (failure == null) {
                subscription.start(current);
              } else {
                failed(command, failure);
                if (subscriptions.remove(command.cmdId(), subscription)) {
                  subscription.close();
                  hub.metrics().subscriptionClosed();
                }
              }
            });
  }

  /** What a new subscription's first update starts from. */
  private CompletionStage<List<LiveSubscription.Point>> current(WsCommand command) {
    DeviceId device = command.device();
    if (command.type() == WsCommand.Type.ATTRIBUTES) {
      List<CompletableFuture<List<AttributeKvEntry>>> reads = new ArrayList<>();
      for (AttributeScope scope : AttributeScope.values()) {
        if (command.scope().contains(scope)) {
          reads.add(hub.queries().attributes(device, scope, command.keys()).toCompletableFuture());
        }
      }
      return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
          .thenApply(
              done -> {
                List<LiveSubscription.Point> points = new ArrayList<>();
                reads.forEach(
                    read ->
                        read.join()
                            .forEach(
                                a ->
                                    points.add(
                                        new LiveSubscription.Point(a.lastUpdateTs(), a.kv()))));
                return points;
              });
    }
    if (!command.history()) {
      return hub.queries().latest(device, command.keys()).thenApply(WsSession::points);
    }
    long start =
        command.startTs() > 0
            ? command.startTs()
            : System.currentTimeMillis() - command.timeWindow();
    return readHistory(command, start, start + command.timeWindow());
  }

  private void history(WsCommand command) {
    long end = command.endTs() > 0 ? command.endTs() : System.currentTimeMillis();
    hub.registry()
        .findById(command.device())
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                throw new IllegalArgumentException("Device " + command.device() + " not found");
              }
              return readHistory(command, command.startTs(), end);
            })
        .whenComplete(
            (points, failure) -> {
              if (failure != null) {
                failed(command, failure);
                return;
              }
              WsUpdate update = new WsUpdate(command.cmdId());
              points.forEach(point -> update.add(point.ts(), point.entry()));
              command.keys().ifPresent(keys -> keys.forEach(update::addEmpty));
              send(update.json());
            });
  }

  private CompletionStage<List<LiveSubscription.Point>> readHistory(
      WsCommand command, long startTs, long endTs) {
    DeviceId device = command.device();
    CompletionStage<Set<String>> keys =
        command.keys().isPresent()
            ? CompletableFuture.completedFuture(command.keys().get())
            : hub.queries().keys(device).thenApply(Set::copyOf);
    return keys.thenCompose(
        resolved -> {
          if (resolved.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
          }
          HistoryQuery query =
              new HistoryQuery(
                  resolved,
                  startTs,
                  endTs,
                  command.interval(),
                  command.limit(),
                  command.agg(),
                  SortOrder.ASC);
          return hub.queries()
              .history(device, query)
              .thenApply(
                  byKey -> {
                    List<LiveSubscription.Point> points = new ArrayList<>();
                    byKey.values().forEach(values -> points.addAll(points(values)));
                    return points;
                  });
        });
  }

  private static List<LiveSubscription.Point> points(List<TsKvEntry> entries) {
    List<LiveSubscription.Point> points = new ArrayList<>(entries.size());
    entries.forEach(entry -> points.add(new LiveSubscription.Point(entry.ts(), entry.kv())));
    return points;
  }

  private void failed(WsCommand command, Throwable failure) {
    Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof IllegalArgumentException) {
      hub.metrics().rejected("bad_command");
      send(WsUpdate.error(command.cmdId(), ErrorCode.BAD_REQUEST, cause.getMessage()));
    } else {
      hub.metrics().rejected("internal");
      LOG.warn("[ws|{}] command {} failed: {}", remote, command.cmdId(), cause.toString());
      send(
          WsUpdate.error(
              command.cmdId(), ErrorCode.INTERNAL_ERROR, "Reading the current values failed"));
    }
  }

  /** Queues one update for the socket; closes the session if the client fell too far behind. */
  void send(String update) {
    QueueOfferResult result = out.offer(update);
    if (result == QueueOfferResult.enqueued()) {
      hub.metrics().updateSent();
    } else if (result == QueueOfferResult.dropped()) {
      close(CloseReason.SLOW, null);
    }
    // QueueClosed / Failure: the session is ending; nothing more to send.
  }

  /** The client stopped sending for idle-timeout, its stream ended, or the server stops. */
  void ended(CloseReason reason) {
    close(reason, null);
  }

  /**
   * Ends the session once: stops every subscription, frees its user's slot, writes {@code last} (if
   * any and if there is room) and then closes the socket. A slow client's socket is closed at once,
   * without writing what waits.
   */
  void close(CloseReason reason, @Nullable String last) {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    subscriptions.values().forEach(LiveSubscription::close);
    hub.metrics().subscriptionsClosed(subscriptions.size());
    subscriptions.clear();
    String who = user;
    if (who != null) {
      hub.release(who);
    }
    hub.metrics().closed(reason);
    if (reason == CloseReason.SLOW) {
      LOG.warn(
          "[ws|{}] closed: the client fell {} updates behind",
          remote,
          hub.config().maxQueuedUpdates());
      out.fail(new IllegalStateException("WebSocket client too slow"));
      return;
    }
    if (reason != CloseReason.CLIENT) {
      LOG.info("[ws|{}] closed: {}", remote, reason);
    }
    if (last != null) {
      out.offer(last);
    }
    out.complete();
  }
}
