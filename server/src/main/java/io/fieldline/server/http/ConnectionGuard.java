package io.fieldline.server.http;

import io.fieldline.server.http.HttpListenerMetrics.Reason;
import io.fieldline.transport.http.ClientConnection;
import java.util.Locale;
import java.util.function.Consumer;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.HttpProtocols;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.BidiShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.AsyncCallback;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;
import org.apache.pekko.util.ByteString;
import org.jspecify.annotations.Nullable;

/**
 * Sits between one connection's HTTP server layer and the routes, and closes the connection when it
 * waits too long for a request head: the deadline runs from the connection's opening, and again
 * from the end of each response (its last byte handed to the socket), until the next request head
 * is complete; bytes trickling in do not extend it. A request being served (a long poll, an upload,
 * a slow query) is not waiting; a connection switched to WebSocket (101) never waits again. While
 * it waits, the connection is listed in the listener's {@link Waiting} table, from which a new
 * connection may evict the one waiting longest when every slot is taken. Each request carries its
 * {@link ClientConnection}, completed when the stage stops (the connection is gone).
 *
 * <p>Confined to the connection's stream (its stage logic); eviction arrives through an async
 * callback.
 */
final class ConnectionGuard
    extends GraphStage<BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse>> {

  /** The listener's table of connections waiting for a request head. Thread-safe. */
  interface Waiting {
    /**
     * Lists a connection as waiting.
     *
     * @param evict run (on any thread) if the connection is evicted
     * @return its ticket
     */
    long start(Runnable evict);

    /**
     * Unlists a connection.
     *
     * @return false if it was evicted meanwhile (it must close)
     */
    boolean stop(long ticket);
  }

  private static final long NOT_WAITING = -1;
  private static final String HEAD = "head";

  private final Inlet<HttpRequest> fromClient = Inlet.create("ConnectionGuard.fromClient");
  private final Outlet<HttpRequest> toRoutes = Outlet.create("ConnectionGuard.toRoutes");
  private final Inlet<HttpResponse> fromRoutes = Inlet.create("ConnectionGuard.fromRoutes");
  private final Outlet<HttpResponse> toClient = Outlet.create("ConnectionGuard.toClient");
  private final BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape =
      BidiShape.of(fromClient, toRoutes, fromRoutes, toClient);

  private final HttpListenerConfig config;
  private final Waiting waiting;
  private final Consumer<Reason> closed;

  /**
   * @param closed told why, when this stage closes the connection
   */
  ConnectionGuard(HttpListenerConfig config, Waiting waiting, Consumer<Reason> closed) {
    this.config = config;
    this.waiting = waiting;
    this.closed = closed;
  }

  @Override
  public BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape() {
    return shape;
  }

  @Override
  public GraphStageLogic createLogic(Attributes inheritedAttributes) {
    return new Logic();
  }

  private final class Logic extends TimerGraphStageLogic {
    private final ClientConnection connection = new ClientConnection();
    private final AsyncCallback<Boolean> evicted =
        createAsyncCallback(unused -> close(Reason.EVICTED));
    private final AsyncCallback<Boolean> responseSent =
        createAsyncCallback(
            unused -> {
              sending = false;
              startWaiting();
            });
    private long ticket = NOT_WAITING;
    private @Nullable HttpRequest pending;
    private boolean lastAsksToClose;
    private int inFlight;
    private boolean sending;
    private boolean upgraded;
    private boolean closing;

    Logic() {
      super(shape);
      setHandler(
          fromClient,
          new AbstractInHandler() {
            @Override
            public void onPush() {
              HttpRequest request = grab(fromClient);
              if (!stopWaiting()) {
                close(Reason.EVICTED);
                return;
              }
              inFlight++;
              lastAsksToClose = asksToClose(request);
              HttpRequest attributed = connection.attachTo(request);
              if (!request.entity().isStrict()) {
                attributed = attributed.withEntity(paced(request.entity()));
              }
              if (isAvailable(toRoutes)) {
                push(toRoutes, attributed);
                readAhead();
              } else {
                pending = attributed;
              }
            }

            @Override
            public void onUpstreamFinish() {
              // No more requests. If one is being served and its client did not ask to close, the
              // client went away (read ahead of the request being served, see readAhead): what
              // waits for it (a long poll) ends now. A response still goes out if it can.
              if (inFlight > 0 && !lastAsksToClose) {
                connection.close();
              }
              if (pending == null) {
                complete(toRoutes);
              }
              if (inFlight == 0 && !sending) {
                completeStage();
              }
            }
          });
      setHandler(
          toRoutes,
          new AbstractOutHandler() {
            @Override
            public void onPull() {
              if (pending != null) {
                push(toRoutes, pending);
                pending = null;
                if (isClosed(fromClient)) {
                  complete(toRoutes);
                  return;
                }
              }
              readAhead();
            }
          });
      setHandler(
          fromRoutes,
          new AbstractInHandler() {
            @Override
            public void onPush() {
              HttpResponse response = grab(fromRoutes);
              inFlight--;
              if (response.status().equals(StatusCodes.SWITCHING_PROTOCOLS)) {
                upgraded = true;
              }
              ResponseEntity entity = response.entity();
              if (entity.isStrict() || upgraded) {
                push(toClient, response);
                startWaiting();
              } else {
                sending = true;
                push(toClient, response.withEntity(watched(entity)));
              }
            }
          });
      setHandler(
          toClient,
          new AbstractOutHandler() {
            @Override
            public void onPull() {
              pull(fromRoutes);
            }
          });
    }

    /**
     * Asks for the next request while one is being served (Pekko reads the socket only on demand,
     * and pipelining-limit 2 lets this demand through): so the end of the connection is seen while
     * a long poll waits, not only when it answers. At most one request waits here.
     */
    private void readAhead() {
      if (pending == null && !hasBeenPulled(fromClient) && !isClosed(fromClient)) {
        pull(fromClient);
      }
    }

    @Override
    public void preStart() {
      startWaiting();
    }

    private void startWaiting() {
      if (upgraded || closing || inFlight > 0 || sending || ticket != NOT_WAITING) {
        return;
      }
      if (isClosed(fromClient)) {
        completeStage();
        return;
      }
      ticket = waiting.start(() -> evicted.invoke(Boolean.TRUE));
      scheduleOnce(HEAD, config.headerReadTimeout());
    }

    /** Stops the head deadline; false if the connection was evicted meanwhile. */
    private boolean stopWaiting() {
      cancelTimer(HEAD);
      if (ticket == NOT_WAITING) {
        return true;
      }
      boolean mine = waiting.stop(ticket);
      ticket = NOT_WAITING;
      return mine;
    }

    // HTTP/1.1 "Connection: close", or HTTP/1.0 without keep-alive: the client ends its side after
    // this request, which is no sign that it went away.
    private static boolean asksToClose(HttpRequest request) {
      String connection =
          request.getHeader("Connection").map(h -> h.value().toLowerCase(Locale.ROOT)).orElse("");
      return connection.contains("close")
          || (request.protocol().equals(HttpProtocols.HTTP_1_0)
              && !connection.contains("keep-alive"));
    }

    @Override
    public void onTimer(Object key) {
      close(stopWaiting() ? Reason.HEADER_TIMEOUT : Reason.EVICTED);
    }

    private void close(Reason reason) {
      if (closing) {
        return;
      }
      closing = true;
      closed.accept(reason);
      completeStage();
    }

    // The request's bytes, failed when they come too slowly. Shaped as Pekko's own request
    // timeout wraps every body (the data through one more stage), so the routes' size limits
    // apply as before.
    private RequestEntity paced(RequestEntity entity) {
      Flow<ByteString, ByteString, Object> pace =
          Flow.fromGraph(
                  new BodyPace(
                      config.bodyReadTimeout(),
                      config.minBodyRate(),
                      () -> closed.accept(Reason.BODY_TIMEOUT)))
              .mapMaterializedValue(unused -> (Object) unused);
      if (entity instanceof org.apache.pekko.http.scaladsl.model.HttpEntity.Default known) {
        return (RequestEntity) known.transformDataBytes(known.contentLength(), pace.asScala());
      }
      return ((org.apache.pekko.http.scaladsl.model.RequestEntity) entity)
          .transformDataBytes(pace.asScala());
    }

    // The response's bytes, telling this stage when the last one went (or the stream failed).
    private ResponseEntity watched(ResponseEntity entity) {
      Flow<ByteString, ByteString, Object> watch =
          Flow.of(ByteString.class)
              .watchTermination(
                  (NotUsed unused,
                      java.util.concurrent.CompletionStage<org.apache.pekko.Done> done) -> {
                    done.whenComplete((ok, error) -> responseSent.invoke(Boolean.TRUE));
                    return (Object) unused;
                  });
      if (entity instanceof org.apache.pekko.http.scaladsl.model.HttpEntity.Default known) {
        // Keeps the Content-Length (a plain transformation would make it chunked).
        return (ResponseEntity) known.transformDataBytes(known.contentLength(), watch.asScala());
      }
      return ((org.apache.pekko.http.scaladsl.model.ResponseEntity) entity)
          .transformDataBytes(watch.asScala());
    }

    @Override
    public void postStop() {
      if (ticket != NOT_WAITING) {
        waiting.stop(ticket);
        ticket = NOT_WAITING;
      }
      connection.close();
    }
  }
}
