package io.fieldline.server.ws;

import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.fleet.live.LiveData;
import io.fieldline.server.rest.HttpJson;
import io.fieldline.server.rest.JwtTokens;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.RemoteAddress;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.StreamLimitReachedException;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.jspecify.annotations.Nullable;

/**
 * ThingsBoard's WebSocket telemetry API (docs/websocket-api.md), mounted under {@code /api}:
 *
 * <ul>
 *   <li>{@code /api/ws}: the first message authenticates ({@code {"authCmd":{"cmdId":0,
 *       "token":"<JWT>"}}}, possibly with {@code cmds}); a session that does not within {@code
 *       auth-timeout} is closed;
 *   <li>{@code /api/ws/plugins/telemetry?token=<JWT>}: the legacy path, authenticated by the query
 *       parameter before the upgrade (a bad token answers 401 and opens nothing), then {@code
 *       tsSubCmds}, {@code historyCmds} and {@code attrSubCmds}.
 * </ul>
 *
 * <p>Each connection is a {@link WsSession} between two streams: client messages (at most {@code
 * max-message-size} each, closed after {@code idle-timeout} without one) handled one at a time, and
 * a bounded queue of updates written to the socket.
 */
public final class WsRoutes extends AllDirectives {

  /** Characters of one part of a large update (see {@link #message}). */
  static final int PART_CHARS = 4096;

  private final WsSessions hub;
  private final Materializer materializer;

  public WsRoutes(
      WsConfig config,
      JwtTokens tokens,
      DeviceRegistry registry,
      TelemetryQueries queries,
      LiveData live,
      MeterRegistry metrics,
      ActorSystem<?> system) {
    this.hub = new WsSessions(config, tokens, registry, queries, live, new WsMetrics(metrics));
    this.materializer = Materializer.matFromSystem(system);
  }

  /** The two paths, relative to {@code /api}. */
  public Route routes() {
    return pathPrefix(
        "ws",
        () ->
            extractClientIP(
                client ->
                    concat(
                        pathEndOrSingleSlash(
                            () -> handleWebSocketMessages(connection(address(client), null))),
                        path(
                            PathMatchers.segment("plugins").slash("telemetry"),
                            () ->
                                parameterOptional(
                                    "token", token -> legacy(address(client), token))))));
  }

  private Route legacy(String remote, Optional<String> token) {
    Optional<String> user =
        token.flatMap(value -> hub.tokens().verify(value, JwtTokens.Kind.ACCESS));
    if (user.isEmpty()) {
      hub.metrics().rejected("unauthorized");
      return complete(HttpJson.error(401, "Authentication failed: a valid ?token= is required"));
    }
    return handleWebSocketMessages(connection(remote, user.get()));
  }

  private static String address(RemoteAddress client) {
    return client.getAddress().map(InetAddress::getHostAddress).orElse("unknown");
  }

  /**
   * The message flow of one connection. The session and everything it holds (its queue, its user's
   * slot, its timers) are made only when Pekko runs the flow, i.e. once the upgrade happened: a
   * request that is not an upgrade costs nothing.
   */
  private Flow<Message, Message, ?> connection(String remote, @Nullable String user) {
    return Flow.fromMaterializer((materializer, attributes) -> session(remote, user));
  }

  private Flow<Message, Message, NotUsed> session(String remote, @Nullable String user) {
    WsConfig config = hub.config();
    // The kill switch ends the stream to the socket without waiting for what is queued.
    Pair<
            Pair<BoundedSourceQueue<WsSession.Outgoing>, UniqueKillSwitch>,
            Source<WsSession.Outgoing, NotUsed>>
        out =
            Source.<WsSession.Outgoing>queue(config.maxQueuedUpdates())
                .viaMat(KillSwitches.single(), Keep.both())
                .preMaterialize(materializer);
    UniqueKillSwitch killSwitch = out.first().second();
    WsSession session = new WsSession(hub, out.first().first(), killSwitch::shutdown, remote, user);
    if (!hub.opened(session)) {
      session.refuseNodeFull();
    } else if (session.admit() && user == null) {
      CompletableFuture.runAsync(
          () -> {
            if (!session.authenticated()) {
              session.close(
                  WsSession.CloseReason.AUTH_TIMEOUT,
                  WsUpdate.error(
                      0,
                      WsUpdate.ErrorCode.UNAUTHORIZED,
                      "No authCmd within " + config.authTimeout().toMillis() + " ms"));
            }
          },
          CompletableFuture.delayedExecutor(
              config.authTimeout().toMillis(), TimeUnit.MILLISECONDS));
    }
    Sink<Message, CompletionStage<Done>> in =
        Flow.<Message>create()
            .idleTimeout(config.idleTimeout())
            .mapAsync(1, message -> text(message, config.maxMessageBytes()))
            .mapAsync(1, session::onText)
            .toMat(Sink.ignore(), Keep.right());
    Source<Message, NotUsed> updates =
        out.second()
            .map(update -> message(session, update))
            .watchTermination(
                (mat, done) -> {
                  done.whenComplete((ok, failure) -> session.settle());
                  return mat;
                });
    return Flow.fromSinkAndSourceMat(in, updates, Keep.left())
        .mapMaterializedValue(
            done -> {
              done.whenComplete((ok, failure) -> session.ended(reason(failure)));
              return NotUsed.getInstance();
            });
  }

  /**
   * The message of {@code update}. A large one goes out in parts of at most {@link #PART_CHARS}
   * characters, each counted as written when Pekko takes it: what Pekko's stages hold for a slow
   * socket is then a few parts, not a few whole updates.
   */
  private static Message message(WsSession session, WsSession.Outgoing update) {
    String text = update.text();
    if (text.length() <= PART_CHARS) {
      session.dequeued(update.bytes());
      return TextMessage.create(text);
    }
    List<String> parts = new ArrayList<>();
    for (int start = 0; start < text.length(); ) {
      int end = Math.min(text.length(), start + PART_CHARS);
      if (end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
        end--; // a surrogate pair stays in one part
      }
      parts.add(text.substring(start, end));
      start = end;
    }
    return TextMessage.create(
        Source.from(parts)
            .map(
                part -> {
                  session.dequeued(SessionOutbound.utf8Length(part));
                  return part;
                }));
  }

  /** Closes every open session, each with a close frame: the server stops. */
  public void closeAll() {
    hub.closeAll();
  }

  private static WsSession.CloseReason reason(@Nullable Throwable failure) {
    if (failure instanceof CompletionException && failure.getCause() != null) {
      failure = failure.getCause();
    }
    if (failure instanceof TimeoutException) {
      return WsSession.CloseReason.IDLE;
    }
    if (failure instanceof StreamLimitReachedException) {
      return WsSession.CloseReason.MESSAGE_TOO_LARGE;
    }
    return WsSession.CloseReason.CLIENT;
  }

  /**
   * The text of one client message, at most {@code max} characters (more fails the connection). A
   * binary message is drained and handled as unreadable text.
   */
  private CompletionStage<String> text(Message message, int max) {
    if (!message.isText()) {
      message.asBinaryMessage().getStreamedData().runWith(Sink.ignore(), materializer);
      return CompletableFuture.completedFuture("");
    }
    TextMessage text = message.asTextMessage();
    if (text.isStrict()) {
      String strict = text.getStrictText();
      return SessionOutbound.utf8Length(strict) > max
          ? CompletableFuture.failedFuture(new StreamLimitReachedException(max))
          : CompletableFuture.completedFuture(strict);
    }
    return text.getStreamedText()
        .limitWeighted(max, SessionOutbound::utf8Length)
        .runFold(new StringBuilder(), StringBuilder::append, materializer)
        .thenApply(StringBuilder::toString);
  }
}
