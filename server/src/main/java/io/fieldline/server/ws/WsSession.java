package io.fieldline.server.ws;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.DeviceId;
import io.fieldline.common.NameRules;
import io.fieldline.common.query.ReadRefusedException;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.fleet.live.LiveData;
import io.fieldline.server.rest.HttpJson;
import io.fieldline.server.rest.JwtTokens;
import io.fieldline.server.ws.WsUpdate.ErrorCode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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
 * max-queued-updates} updates or {@code max-queued-bytes} bytes are waiting, the session is closed
 * ({@link CloseReason#SLOW}) rather than buffering more. Each subscription takes its estimate from
 * the node's {@link WsMemory} budget while it lives, each queued update its bytes until Pekko took
 * it for the socket ({@link #settle} gives back what the socket never took). Every way a session
 * ends goes through {@link #close}, which releases its subscriptions and its user's session slot
 * exactly once.
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
    MEMORY_BUDGET,
    SERVER_STOPPING
  }

  /** An update waiting for the socket, with its size as framed (UTF-8 bytes). */
  record Outgoing(String text, long bytes) {}

  /** A command's device does not exist: its message is the client's answer. */
  private static final class DeviceNotFound extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DeviceNotFound(DeviceId device) {
      super("Device " + device + " not found", null, false, false);
    }
  }

  private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

  private final WsSessions hub;
  private final BoundedSourceQueue<Outgoing> out;
  private final Runnable dropQueued;
  private final String remote;
  private final Map<Integer, LiveSubscription> subscriptions = new ConcurrentHashMap<>();
  private final SessionOutbound outbound;
  private final AtomicInteger historyReads = new AtomicInteger();
  private final ReadPermits reads;
  private volatile CommandReads reading;
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
      BoundedSourceQueue<Outgoing> out,
      Runnable dropQueued,
      String remote,
      @Nullable String user) {
    this.hub = hub;
    this.out = out;
    this.dropQueued = dropQueued;
    this.remote = remote;
    this.user = user;
    this.reads = new ReadPermits(hub.config().maxSubscriptionReads());
    this.reading = readsOf(user);
    this.outbound = new SessionOutbound(hub.memory(), hub.config().maxQueuedBytes());
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

  /**
   * Handles one client message. Never throws: every problem is answered with an error update. The
   * stage completes once every command of the message started (a subscription waits for a read
   * permit first): the connection reads the next message only then.
   */
  CompletionStage<Void> onText(String text) {
    if (closed) {
      return DONE;
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
      return DONE;
    }
    if (message.has("authCmd") && !authenticate(message.path("authCmd"))) {
      return DONE;
    }
    if (user == null) {
      close(
          CloseReason.AUTH_FAILED,
          WsUpdate.error(0, ErrorCode.UNAUTHORIZED, "Authenticate first: send an authCmd"));
      return DONE;
    }
    WsCommand.Batch batch = WsCommand.parse(message, hub.config().maxKeysPerCommand());
    for (WsCommand.Bad bad : batch.bad()) {
      hub.metrics().rejected(bad.tag());
      LOG.debug("[ws|{}] bad command {}: {}", remote, bad.cmdId(), bad.reason());
      send(WsUpdate.error(bad.cmdId(), ErrorCode.BAD_REQUEST, bad.reason()));
    }
    CompletionStage<Void> started = DONE;
    for (WsCommand command : batch.commands()) {
      if (command.unsubscribe() || command.type() == WsCommand.Type.TIMESERIES_HISTORY) {
        started = started.thenRun(() -> run(command));
      } else {
        started = started.thenCompose(ready -> reads.acquire()).thenRun(() -> subscribe(command));
      }
    }
    return started;
  }

  private boolean authenticate(JsonNode authCmd) {
    int cmdId = authCmd.path("cmdId").asInt(0);
    if (user != null) {
      return true; // already authenticated (e.g. the legacy path): a second authCmd changes nothing
    }
    Optional<String> verified =
        hub.tokens().verify(authCmd.path("token").asText(""), JwtTokens.Kind.ACCESS);
    if (verified.isEmpty()) {
      hub.metrics().rejected("unauthorized");
      // close() writes the one (throttled) line of this failure.
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
        reading = readsOf(user);
      }
    }
    if (!admitted) {
      refuseTooMany(cmdId, verified.get());
    }
    return admitted;
  }

  private void refuseTooMany(int cmdId, String who) {
    LOG.debug("[ws|{}] refused: {} already has its sessions", remote, who);
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
    } else {
      history(command);
    }
  }

  /** Starts a subscription holding a read permit, given back once its first read is over. */
  private void subscribe(WsCommand command) {
    boolean reading = false;
    try {
      reading = startSubscription(command);
    } finally {
      if (!reading) {
        reads.release();
      }
    }
  }

  /** Starts a subscription; true if its first read runs (and will give back the read permit). */
  private boolean startSubscription(WsCommand command) {
    if (closed) {
      return false;
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
      return false;
    }
    long estimate = estimate(command);
    if (!hub.memory().tryTakeForSubscription(estimate)) {
      refuseOverBudget(command.cmdId(), "subscription");
      return false;
    }
    LiveSubscription subscription =
        new LiveSubscription(
            command,
            this::send,
            () -> close(CloseReason.SLOW, null),
            outbound,
            hub.config().maxQueuedUpdates(),
            hub.config().maxKeysPerCommand());
    hub.metrics().subscriptionOpened();
    // ThingsBoard's rule: a command with the id of a live subscription replaces it.
    release(subscriptions.put(command.cmdId(), subscription));
    if (closed) {
      // Closed while this command ran: close() may have missed the subscription just added.
      release(subscriptions.remove(command.cmdId()));
      return false;
    }
    DeviceId device = command.target();
    hub.registry()
        .findById(device)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                throw new DeviceNotFound(device);
              }
              // Listening starts before the read, and the read waits until every node knows of
              // the watch: nothing stored in between is missed.
              LiveData.Watch watch = hub.live().watch(device, subscription);
              subscription.registered(watch);
              return watch.ready().thenCompose(ready -> reading.current(command));
            })
        .whenComplete(
            (current, failure) -> {
              reads.release();
              if (failure == null) {
                subscription.start(current);
              } else {
                failed(command, failure);
                if (subscriptions.remove(command.cmdId(), subscription)) {
                  release(subscription);
                }
              }
            });
    return true;
  }

  /** Closes a subscription no longer in the map (null: nothing to close). */
  private void release(@Nullable LiveSubscription gone) {
    if (gone != null) {
      gone.close();
      hub.memory().give(estimate(gone.command()));
      hub.metrics().subscriptionClosed();
    }
  }

  /**
   * What a subscription of {@code command} may keep ({@link WsMemory#subscription}): its keys, or
   * for every key {@code max-keys-per-command} names of the longest length.
   */
  private long estimate(WsCommand command) {
    return command.keys().isPresent()
        ? WsMemory.subscription(command.keys().get().size(), command.keyChars())
        : WsMemory.subscription(
            hub.config().maxKeysPerCommand(),
            (long) hub.config().maxKeysPerCommand() * NameRules.MAX_LENGTH);
  }

  private void refuseOverBudget(int cmdId, String what) {
    hub.metrics().rejected("memory_budget");
    hub.metrics()
        .log(
            LOG,
            true,
            "memory_budget",
            "[ws|{}] {} refused: the WebSocket memory budget ({} bytes) is used up",
            remote,
            what,
            hub.memory().limit());
    sendError(
        cmdId,
        "This node's WebSocket memory budget is used up: close subscriptions, name fewer keys"
            + " or retry later");
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
        .findById(command.target())
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                throw new DeviceNotFound(command.target());
              }
              return reading.history(command, command.startTs(), end);
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
              String answer = update.json();
              long bytes = SessionOutbound.utf8Length(answer);
              // Not an update that can wait: an answer that does not fit is refused, not queued.
              if (!hub.memory().tryTake(bytes)) {
                refuseOverBudget(command.cmdId(), "history answer of " + bytes + " bytes");
                return;
              }
              hub.memory().give(bytes);
              send(answer);
            });
  }

  /** Reads on behalf of {@code who}: its share of the node's read budget (until login, none). */
  private CommandReads readsOf(@Nullable String who) {
    TelemetryQueries queries = who == null ? hub.queries() : hub.queries().forUser(who);
    return new CommandReads(queries, hub.config().maxKeysPerCommand());
  }

  /**
   * Answers a command whose reading failed: our own refusals (a missing device, a bound) with their
   * message, anything else with a fixed text (never an exception's).
   */
  private void failed(WsCommand command, Throwable failure) {
    Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
    if ((cause instanceof DeviceNotFound || cause instanceof IllegalArgumentException)
        && cause.getMessage() != null) {
      hub.metrics().rejected("bad_command");
      send(
          WsUpdate.error(
              command.cmdId(),
              ErrorCode.BAD_REQUEST,
              cause instanceof DeviceNotFound
                  ? cause.getMessage()
                  : HttpJson.clientMessage(cause, "Bad command")));
    } else if (cause instanceof ReadRefusedException refused) {
      hub.metrics().rejected("read_refused");
      // its message is written for the client (ReadRefusedException's constructor)
      send(
          WsUpdate.error(
              command.cmdId(), ErrorCode.INTERNAL_ERROR, String.valueOf(refused.getMessage())));
    } else {
      hub.metrics().rejected("internal");
      hub.metrics()
          .log(
              LOG,
              true,
              "internal",
              "[ws|{}] command {} failed: {}",
              remote,
              command.cmdId(),
              cause.getClass().getSimpleName());
      send(
          WsUpdate.error(
              command.cmdId(), ErrorCode.INTERNAL_ERROR, "Reading the current values failed"));
    }
  }

  /**
   * Queues one update for the socket; closes the session if the client fell too far behind: more
   * than {@code max-queued-updates} updates or {@code max-queued-bytes} bytes waiting (one update
   * always fits an empty queue), or if the node's memory budget cannot take it ({@link
   * CloseReason#MEMORY_BUDGET}).
   */
  void send(String update) {
    long bytes = SessionOutbound.utf8Length(update);
    switch (outbound.reserve(bytes)) {
      case TAKEN -> enqueue(new Outgoing(update, bytes));
      case SESSION_FULL -> close(CloseReason.SLOW, null);
      case NODE_FULL -> close(CloseReason.MEMORY_BUDGET, null);
      case ENDED -> {
        // the session is ending; nothing more to send
      }
    }
  }

  /** Queues an error answer: small, it is counted but never refused for the budget. */
  private void sendError(int cmdId, String message) {
    String update = WsUpdate.error(cmdId, ErrorCode.BAD_REQUEST, message);
    long bytes = SessionOutbound.utf8Length(update);
    if (outbound.force(bytes)) {
      enqueue(new Outgoing(update, bytes));
    }
  }

  private void enqueue(Outgoing update) {
    QueueOfferResult result = out.offer(update);
    if (result == QueueOfferResult.enqueued()) {
      hub.metrics().updateSent();
      return;
    }
    outbound.give(update.bytes());
    if (result == QueueOfferResult.dropped()) {
      close(CloseReason.SLOW, null);
    }
    // QueueClosed / Failure: the session is ending; nothing more to send.
  }

  /** {@code bytes} of an update left the queue: Pekko took them for the socket. */
  void dequeued(long bytes) {
    outbound.give(bytes);
  }

  /** The stream to the socket ended: what is still counted goes back to the node's budget. */
  void settle() {
    outbound.settle();
  }

  /** The log line's words for {@code reason}. */
  private String describe(CloseReason reason) {
    return switch (reason) {
      case SLOW -> "the client fell too far behind (max-queued-updates or max-queued-bytes)";
      case MEMORY_BUDGET -> "the node's WebSocket memory budget is used up";
      case MESSAGE_TOO_LARGE ->
          "a message larger than " + hub.config().maxMessageBytes() + " bytes";
      case AUTH_FAILED -> "authentication failed (invalid or expired token, or none)";
      case AUTH_TIMEOUT -> "no authCmd within auth-timeout";
      case TOO_MANY_SESSIONS -> "too many sessions (max-sessions-per-user or max-sessions)";
      case IDLE -> "nothing received for idle-timeout";
      case CLIENT, SERVER_STOPPING -> reason.name().toLowerCase(java.util.Locale.ROOT);
    };
  }

  /** The client stopped sending for idle-timeout, its stream ended, or the server stops. */
  void ended(CloseReason reason) {
    close(
        reason,
        reason == CloseReason.MESSAGE_TOO_LARGE
            ? WsUpdate.error(
                0,
                ErrorCode.BAD_REQUEST,
                "Message too large: at most " + hub.config().maxMessageBytes() + " bytes")
            : null);
  }

  /** Refuses a session the node has no room for ({@code max-sessions}). */
  void refuseNodeFull() {
    hub.metrics().rejected("too_many_sessions");
    close(
        CloseReason.TOO_MANY_SESSIONS,
        WsUpdate.error(
            0,
            ErrorCode.BAD_REQUEST,
            "Too many sessions on this server: at most " + hub.config().maxSessions()));
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
    reads.close();
    if (who != null) {
      hub.release(who);
    }
    hub.closed(this, reason);
    if (reason != CloseReason.CLIENT && reason != CloseReason.SERVER_STOPPING) {
      boolean warn =
          reason == CloseReason.SLOW
              || reason == CloseReason.MEMORY_BUDGET
              || reason == CloseReason.MESSAGE_TOO_LARGE;
      hub.metrics().log(LOG, warn, reason.name(), "[ws|{}] closed: {}", remote, describe(reason));
    }
    if (reason == CloseReason.SLOW || reason == CloseReason.MEMORY_BUDGET) {
      dropQueued.run();
      return;
    }
    if (last != null) {
      // Counted like any update, never refused: the session's last words are small.
      long bytes = SessionOutbound.utf8Length(last);
      if (outbound.force(bytes)
          && out.offer(new Outgoing(last, bytes)) != QueueOfferResult.enqueued()) {
        outbound.give(bytes);
      }
    }
    out.complete();
  }
}
