package io.fieldline.server.fuzz;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * Sends lanes to the live server over real sockets on 127.0.0.1, all lanes of one execution at
 * once, and reads every answer with a minimal framer (fixed header and remaining length) until the
 * lane is over: its PINGRESPs arrived, or the server closed it. A framed lane must be answered or
 * closed within {@code answerBound}. A lane that does not frame may leave the server waiting for
 * the rest of a packet: after {@code quiet} without an answer the lane shuts its output (FIN, or
 * TLS close_notify) and the server must then close within {@code answerBound}. Anything else is a
 * finding. Thread-safe: one reader and one writer thread per lane, from a pool the runner owns.
 */
final class LaneRunner implements AutoCloseable {

  /** How a lane ended. */
  enum Outcome {
    /** Every PINGRESP the lane was owed arrived. */
    ANSWERED,
    /** The server closed the connection (end of stream or reset). */
    CLOSED,
    /** The server waited for more bytes; it closed once the lane shut its output. */
    DRAINED,
    /** Neither answered nor closed within the bound: a stuck connection. */
    SILENT,
    /** The server sent bytes that are not an MQTT packet a server may send. */
    BAD_ANSWER,
    /** No TCP connection or no TLS handshake with the live listener. */
    UNREACHABLE
  }

  /** A lane's end, with what is worth reporting about it. */
  record Result(Lane lane, Outcome outcome, int connackCode, Duration took, String detail) {}

  // MQTT 5 §2.1.2: the packet types a server sends (CONNACK, PUBLISH, the acks, SUBACK, UNSUBACK,
  // PINGRESP, DISCONNECT, AUTH); 3.1.1 uses a subset.
  private static final int SERVER_TYPES = 0b1110_1010_1111_1100;
  private static final int PINGRESP = 13;
  private static final int CONNACK = 2;
  private static final int LARGEST_ANSWER = 1 << 20;
  private static final int POLL_MILLIS = 25;

  private final InetSocketAddress plain;
  private final InetSocketAddress tls;
  private final SSLContext tlsContext;
  private final Duration quiet;
  private final Duration answerBound;
  private final AtomicInteger threads = new AtomicInteger();
  private final ExecutorService pool =
      Executors.newCachedThreadPool(
          task -> {
            Thread thread = new Thread(task, "fuzz-lane-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
          });

  LaneRunner(
      InetSocketAddress plain,
      InetSocketAddress tls,
      SSLContext tlsContext,
      Duration quiet,
      Duration answerBound) {
    this.plain = plain;
    this.tls = tls;
    this.tlsContext = tlsContext;
    this.quiet = quiet;
    this.answerBound = answerBound;
  }

  /** Runs the lanes side by side; returns when every one has ended. */
  List<Result> run(List<Lane> lanes) throws InterruptedException {
    List<Future<Result>> running = new ArrayList<>();
    for (Lane lane : lanes) {
      running.add(pool.submit(() -> runLane(lane)));
    }
    List<Result> results = new ArrayList<>();
    for (Future<Result> lane : running) {
      try {
        results.add(lane.get());
      } catch (ExecutionException e) {
        throw new IllegalStateException("lane runner failed", e.getCause());
      }
    }
    return results;
  }

  private Result runLane(Lane lane) throws InterruptedException {
    long started = System.nanoTime();
    Socket tcp = new Socket();
    Socket socket;
    try {
      socket = open(tcp, lane.listener());
    } catch (IOException e) {
      close(tcp);
      return new Result(lane, Outcome.UNREACHABLE, -1, since(started), e.toString());
    }
    try (tcp;
        socket) {
      Reader reader = new Reader(tcp, socket, lane, started);
      Future<Result> answer = pool.submit(reader);
      try {
        write(socket.getOutputStream(), lane);
      } catch (IOException closedByServer) {
        // The server may close while we write (a malformed packet): the reader sees the end.
      }
      reader.written = System.nanoTime();
      try {
        return answer.get(answerBound.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        throw new IllegalStateException("lane reader failed", e.getCause());
      } catch (TimeoutException e) {
        answer.cancel(true);
        return new Result(
            lane, Outcome.SILENT, reader.connack, since(started), "reader did not finish");
      }
    } catch (IOException closing) {
      return new Result(lane, Outcome.CLOSED, -1, since(started), closing.toString());
    }
  }

  private static Duration since(long started) {
    return Duration.ofNanos(System.nanoTime() - started);
  }

  /**
   * Connects {@code tcp} and returns the socket to speak MQTT on: {@code tcp} itself, or TLS over
   * it. Closing {@code tcp} ends both, even while another thread is blocked writing.
   */
  private Socket open(Socket tcp, Lane.Listener listener) throws IOException {
    tcp.setTcpNoDelay(true);
    tcp.setSoTimeout(10_000);
    tcp.connect(listener == Lane.Listener.PLAIN ? plain : tls, 10_000);
    if (listener != Lane.Listener.TLS) {
      return tcp;
    }
    SSLSocket socket =
        (SSLSocket)
            tlsContext
                .getSocketFactory()
                .createSocket(tcp, tls.getHostString(), tls.getPort(), true);
    socket.startHandshake();
    return socket;
  }

  private static void close(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing is all we wanted
    }
  }

  private static void write(OutputStream out, Lane lane) throws IOException {
    byte[] bytes = lane.bytes();
    if (lane.chunk() == 0) {
      out.write(bytes);
    } else {
      for (int from = 0; from < bytes.length; from += lane.chunk()) {
        out.write(bytes, from, Math.min(lane.chunk(), bytes.length - from));
        out.flush();
      }
    }
    out.flush();
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }

  /** Reads one lane's answers and decides how the lane ended. */
  private final class Reader implements Callable<Result> {

    private final Socket tcp;
    private final Socket socket;
    private final Lane lane;
    private final long started;
    private volatile long written;
    private volatile int connack = -1;
    private int pingresps;
    private long lastHeard;
    private long shut;

    Reader(Socket tcp, Socket socket, Lane lane, long started) {
      this.tcp = tcp;
      this.socket = socket;
      this.lane = lane;
      this.started = started;
    }

    @Override
    public Result call() throws IOException {
      socket.setSoTimeout(POLL_MILLIS);
      InputStream in = socket.getInputStream();
      lastHeard = System.nanoTime();
      while (true) {
        int first;
        try {
          first = in.read();
        } catch (SocketTimeoutException idle) {
          Result over = idle(System.nanoTime());
          if (over != null) {
            return over;
          }
          continue;
        } catch (IOException reset) {
          return closed();
        }
        if (first < 0) {
          return closed();
        }
        lastHeard = System.nanoTime();
        int type = first >> 4;
        byte[] body;
        try {
          body = readBody(in, lastHeard + answerBound.toNanos());
        } catch (SocketTimeoutException stalled) {
          return end(Outcome.BAD_ANSWER, "packet type " + type + " stalled half-way");
        } catch (EOFException truncated) {
          // A close with a write still under way: the server ended the connection.
          return end(Outcome.CLOSED, "packet type " + type + " cut short by the close");
        } catch (IOException reset) {
          return closed();
        }
        if (body == null || (SERVER_TYPES & (1 << type)) == 0) {
          return end(Outcome.BAD_ANSWER, "first byte 0x" + Integer.toHexString(first));
        }
        if (type == CONNACK && connack < 0 && body.length >= 2) {
          connack = body[1] & 0xff;
        }
        if (type == PINGRESP && ++pingresps >= lane.pingresps() && written != 0) {
          return end(Outcome.ANSWERED, "");
        }
      }
    }

    /** Nothing to read for a moment: the lane's end, or null to read on. */
    private Result idle(long now) {
      long doneWriting = written;
      if (doneWriting == 0) {
        // Still writing: the server may be pausing its reads (backpressure), not for ever.
        return now - started > answerBound.toNanos() * 2
            ? end(Outcome.SILENT, "did not read the lane's bytes")
            : null;
      }
      if (pingresps >= lane.pingresps()) {
        return end(Outcome.ANSWERED, "");
      }
      if (shut != 0) {
        return now - shut > answerBound.toNanos()
            ? end(Outcome.SILENT, "not closed after our FIN")
            : null;
      }
      if (lane.framed()) {
        return now - doneWriting > answerBound.toNanos()
            ? end(Outcome.SILENT, pingresps + " of " + lane.pingresps() + " PINGRESPs")
            : null;
      }
      if (now - Math.max(doneWriting, lastHeard) > quiet.toNanos()) {
        // The server may be waiting for the rest of a packet that will not come: tell it so.
        shut = now;
        try {
          socket.shutdownOutput();
        } catch (IOException | UnsupportedOperationException e) {
          try {
            tcp.shutdownOutput();
          } catch (IOException alreadyClosed) {
            return closed();
          }
        }
      }
      return null;
    }

    private Result closed() {
      return end(shut == 0 ? Outcome.CLOSED : Outcome.DRAINED, "");
    }

    /**
     * The body after the remaining length, or null if the length is not a valid one. Waits for the
     * rest of a packet until {@code deadline} (System.nanoTime()).
     */
    private byte[] readBody(InputStream in, long deadline) throws IOException {
      int length = 0;
      int digit;
      int shift = 0;
      byte[] one = new byte[1];
      do {
        readFully(in, one, deadline);
        digit = one[0] & 0xff;
        length |= (digit & 0x7f) << shift;
        shift += 7;
      } while ((digit & 0x80) != 0 && shift < 28);
      if ((digit & 0x80) != 0 || length > LARGEST_ANSWER) {
        return null;
      }
      byte[] body = new byte[length];
      readFully(in, body, deadline);
      return body;
    }

    /** Fills {@code buffer}, reading on through the socket's short timeouts until the deadline. */
    private static void readFully(InputStream in, byte[] buffer, long deadline) throws IOException {
      int filled = 0;
      while (filled < buffer.length) {
        try {
          int read = in.read(buffer, filled, buffer.length - filled);
          if (read < 0) {
            throw new EOFException();
          }
          filled += read;
        } catch (SocketTimeoutException idle) {
          if (System.nanoTime() > deadline) {
            throw idle;
          }
        }
      }
    }

    /** Ends the lane; closing the TCP socket also frees a writer the server stopped reading. */
    private Result end(Outcome outcome, String detail) {
      close(tcp);
      return new Result(lane, outcome, connack, since(started), detail);
    }
  }
}
