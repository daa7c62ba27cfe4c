package io.fieldline.server.http;

import io.fieldline.server.http.HttpListenerMetrics.Reason;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.IncomingConnection;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The HTTP listener: Pekko HTTP's connection source, each accepted connection admitted or closed at
 * once, then served through a {@link ConnectionGuard} in front of the routes. Admission: at most
 * {@link HttpListenerConfig#maxConnectionsPerAddress()} open from one source address; at most
 * {@link HttpListenerConfig#maxConnections()} open in all, and when they are, the new connection
 * takes the slot of the one that has waited longest for a request head (evicted, closed) — a
 * connection that sent no request holds no work, so trickling or idle connections cannot keep a
 * health check, a scrape or a device out; only when every open connection is busy with a request
 * (or a WebSocket) is the new one closed. Replaces Pekko's own {@code max-connections}, which makes
 * new connections wait in the accept queue behind idle ones.
 *
 * <p>Thread-safe: admission runs on the connection source's stream, releases and evictions on each
 * connection's.
 */
public final class HttpListener {

  private final HttpListenerConfig config;
  private final HttpListenerMetrics metrics;
  private final AtomicInteger open = new AtomicInteger();
  private final Map<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
  private final ConcurrentSkipListMap<Long, Runnable> waiting = new ConcurrentSkipListMap<>();
  private final AtomicLong tickets = new AtomicLong();

  private final ConnectionGuard.Waiting waitingTable =
      new ConnectionGuard.Waiting() {
        @Override
        public long start(Runnable evict) {
          long ticket = tickets.incrementAndGet();
          waiting.put(ticket, evict);
          return ticket;
        }

        @Override
        public boolean stop(long ticket) {
          return waiting.remove(ticket) != null;
        }
      };

  public HttpListener(HttpListenerConfig config, MeterRegistry registry) {
    this.config = config;
    this.metrics = new HttpListenerMetrics(registry, open::get);
  }

  /** Binds {@code host:port} and serves {@code routes} on every admitted connection. */
  public CompletionStage<ServerBinding> bind(
      ClassicActorSystemProvider system,
      String host,
      int port,
      ServerSettings settings,
      Route routes) {
    Materializer materializer = Materializer.matFromSystem(system);
    Flow<HttpRequest, HttpResponse, ?> handler = routes.flow(system);
    Source<IncomingConnection, CompletionStage<ServerBinding>> connections =
        Http.get(system).newServerAt(host, port).withSettings(settings).connectionSource();
    return connections
        .toMat(Sink.foreach(connection -> admit(connection, handler, materializer)), Keep.left())
        .run(materializer);
  }

  private void admit(
      IncomingConnection connection,
      Flow<HttpRequest, HttpResponse, ?> handler,
      Materializer materializer) {
    InetAddress address = connection.remoteAddress().getAddress();
    // Counted before the checks (and given back by release), atomically per address.
    int mine = perAddress.merge(address, 1, Integer::sum);
    if (config.maxConnectionsPerAddress() > 0 && mine > config.maxConnectionsPerAddress()) {
      release(address, false);
      refuse(connection, materializer, Reason.ADDRESS_LIMIT, address);
      return;
    }
    if (open.incrementAndGet() > config.maxConnections() && !evictOne()) {
      release(address, true);
      refuse(connection, materializer, Reason.CONNECTION_LIMIT, address);
      return;
    }
    BidiFlow<HttpRequest, HttpRequest, HttpResponse, HttpResponse, ?> guard =
        BidiFlow.fromGraph(
            new ConnectionGuard(config, waitingTable, reason -> metrics.rejected(reason, address)));
    CompletionStage<Done> done =
        connection.handleWith(
            guard.join(handler).watchTermination((unused, terminated) -> terminated), materializer);
    done.whenComplete((ok, error) -> release(address, true));
  }

  /**
   * Closes the connection that has waited longest for a request head, leaving its slot to a new one
   * (it counts as open until it is gone, a moment later).
   *
   * @return false when no connection waits
   */
  private boolean evictOne() {
    Map.Entry<Long, Runnable> oldest = waiting.pollFirstEntry();
    if (oldest == null) {
      return false;
    }
    oldest.getValue().run();
    return true;
  }

  private void release(InetAddress address, boolean counted) {
    if (counted) {
      open.decrementAndGet();
    }
    perAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
  }

  private void refuse(
      IncomingConnection connection, Materializer materializer, Reason reason, InetAddress from) {
    metrics.rejected(reason, from);
    // No request is read and no response sent: the connection closes at once.
    connection.handleWith(
        Flow.fromSinkAndSourceCoupled(Sink.<HttpRequest>cancelled(), Source.<HttpResponse>empty()),
        materializer);
  }

  /** Open connections now. */
  public int open() {
    return open.get();
  }
}
