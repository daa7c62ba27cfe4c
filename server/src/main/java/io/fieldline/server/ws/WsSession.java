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
import io.fieldline.server.live.LiveData;
import io.fieldline.server.rest.JwtTokens;
import io.fieldline.server.ws.WsUpdate.ErrorCode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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

  /** Most raw points one history answer may carry (keys × limit): one update, a few MB at most. */
  static final long MAX_HISTORY_POINTS = 100_000;

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
  private final Runnable dropQueued;
  private final String remote;
  private final Map<Integer, LiveSubscription> subscriptions = new ConcurrentHashMap<>();
  private final AtomicLong queuedChars = new AtomicLong();
  private final AtomicInteger historyReads = new AtomicInteger();
  // Both written under "this" together with closed, so a slot is taken and given back once.
  private volatile @Nullable String user;
  private volatile boolean closed;

  /**
   * @param user the authenticated user (the legacy path checks its {@code ?token=} before the
   *     upgrade), or null until an {@code authCmd} arrives
   */
  /**
   * @param out the updates waiting for the socket
   * @param dropQueued ends the socket's stream at once, dropping what waits (a slow client)
   */
  WsSession(
      WsSessions hub,
      BoundedSourceQueue<String> out,
      Runnable dropQueued,
      String remote,
      @Nullable String user) {
    this.hub = hub;
    this.out = out;
    this.dropQueued = dropQueued;
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
    boolean admitted;
    synchronized (this) {
      if (closed) {
        return false; // closed meanwhile (auth timeout): no slot may be taken now
      }
      admitted = hub.admit(verified.get());
      if (admitted) {
        user = verified.get();
      }
    }
    if (!admitted) {
      refuseTooMany(cmdId, verified.get());
    }
    return admitted;
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
      release(subscriptions.remove(command.cmdId()));
      return;
    }
    if (command.type() == WsCommand.Type.TIMESERIES_HISTORY) {
      history(command);
      return;
    }
    if (!subscriptions.containsKey(command.cmdId())
        && subscriptions.size() >= hub.config().maxSubscriptionsPerSession()) {
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
    hub.metrics().subscriptionOpened();
    // ThingsBoard's rule: a command with the id of a live subscription replaces it.
    release(subscriptions.put(command.cmdId(), subscription));
    if (closed) {
      // Closed while this command ran: close() may have missed the subscription just added.
      release(subscriptions.remove(command.cmdId()));
      return;
    }
    DeviceId device = command.device();
    hub.registry()
        .findById(device)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                throw new IllegalArgumentException("Device " + device + " not found");
              }
              // Listening starts before the read, and the read waits until every node knows of
              // the watch: nothing stored in between is missed.
              LiveData.Watch watch = hub.live().watch(device, subscription);
              subscription.registered(watch);
              return watch.ready().thenCompose(ready -> current(command));
            })
        .whenComplete(
            (current, failure) -> {
              if (failure == null) {
                subscription.start(current);
              } else {
                failed(command, failure);
                if (subscriptions.remove(command.cmdId(), subscription)) {
                  release(subscription);
                }
              }
            });
  }

  /** Closes a subscription no longer in the map (null: nothing to close). */
  private void release(@Nullable LiveSubscription gone) {
    if (gone != null) {
      gone.close();
      hub.metrics().subscriptionClosed();
    }
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
    if (historyReads.incrementAndGet() > hub.config().maxHistoryReads()) {
      historyReads.decrementAndGet();
      hub.metrics().rejected("too_many_history_reads");
      send(
          WsUpdate.error(
              command.cmdId(),
              ErrorCode.BAD_REQUEST,
              "Too many history commands at once: at most "
                  + hub.config().maxHistoryReads()
                  + " per session"));
      return;
    }
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
              historyReads.decrementAndGet();
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
          // At most MAX_HISTORY_POINTS raw points per answer: the limit per key is lowered.
          int limit =
              (int) Math.max(1, Math.min(command.limit(), MAX_HISTORY_POINTS / resolved.size()));
          HistoryQuery query =
              new HistoryQuery(
                  resolved,
                  startTs,
                  endTs,
                  command.interval(),
                  limit,
                  command.agg(),
                  // The newest points when the limit cuts (as ThingsBoard and our REST API).
                  SortOrder.DESC);
          return hub.queries()
              .history(device, query)
              .thenApply(
                  byKey -> {
                    List<LiveSubscription.Point> points = new ArrayList<>();
                    for (List<TsKvEntry> newestFirst : byKey.values()) {
                      List<TsKvEntry> inTimeOrder = new ArrayList<>(newestFirst);
                      Collections.reverse(inTimeOrder);
                      points.addAll(points(inTimeOrder));
                    }
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

  /**
   * Queues one update for the socket; closes the session if the client fell too far behind: more
   * than {@code max-queued-updates} updates or {@code max-queued-bytes} characters waiting (one
   * update always fits an empty queue).
   */
  void send(String update) {
    long size = update.length();
    long before = queuedChars.getAndAdd(size);
    if (before > 0 && before + size > hub.config().maxQueuedBytes()) {
      queuedChars.addAndGet(-size);
      close(CloseReason.SLOW, null);
      return;
    }
    QueueOfferResult result = out.offer(update);
    if (result == QueueOfferResult.enqueued()) {
      hub.metrics().updateSent();
      return;
    }
    queuedChars.addAndGet(-size);
    if (result == QueueOfferResult.dropped()) {
      close(CloseReason.SLOW, null);
    }
    // QueueClosed / Failure: the session is ending; nothing more to send.
  }

  /** An update left the queue for the socket. */
  void dequeued(String update) {
    queuedChars.addAndGet(-update.length());
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
    String who;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      who = user;
      user = null;
    }
    for (Integer cmdId : List.copyOf(subscriptions.keySet())) {
      release(subscriptions.remove(cmdId));
    }
    if (who != null) {
      hub.release(who);
    }
    hub.closed(this, reason);
    if (reason == CloseReason.SLOW) {
      LOG.warn(
          "[ws|{}] closed: the client fell {} updates behind",
          remote,
          hub.config().maxQueuedUpdates());
      dropQueued.run();
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
