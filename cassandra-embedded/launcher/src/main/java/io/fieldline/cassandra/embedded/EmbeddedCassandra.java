package io.fieldline.cassandra.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real Apache Cassandra 5.0 node running in a child JVM on 127.0.0.1, for tests and for the
 * server's "embedded" default. cassandra-all is never on this JVM's classpath: the node runs from
 * the jars listed in {@link EmbeddedCassandraConfig#classpathFile()}.
 *
 * <p>Lifecycle: {@link #start()} generates {@code conf/}, launches the child and blocks until the
 * CQL port accepts connections; {@link #stop()} (SIGTERM) and {@link #kill()} (SIGKILL) end it;
 * {@code start()} after either brings the node back on the same ports with the same data.
 *
 * <p>Thread-safe: lifecycle methods are serialised on an internal lock, except that {@code stop()}
 * and {@code kill()} first abort a start that is still waiting for the port.
 */
public final class EmbeddedCassandra implements AutoCloseable {

  /** SimpleSnitch's datacenter: the driver's {@code local-datacenter}. */
  public static final String LOCAL_DATACENTER = "datacenter1";

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedCassandra.class);

  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(150);
  private static final int CONNECT_TIMEOUT_MILLIS = 200;
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
  private static final int LOG_TAIL_LINES = 60;

  private final EmbeddedCassandraConfig config;
  private final CassandraConfFiles files;
  private final PidFile pidFile;
  private final Object lock = new Object();

  /** Chosen at the first start, then kept. */
  private volatile @Nullable CassandraPorts ports;

  /** The node, once it answered on CQL; null when stopped. */
  private volatile @Nullable Process process;

  /** The child of a start still waiting for its port. */
  private volatile @Nullable Process launching;

  private volatile long lastPid = -1;

  private EmbeddedCassandra(EmbeddedCassandraConfig config) {
    this.config = config;
    this.files = new CassandraConfFiles(config.workDir());
    this.pidFile = new PidFile(files);
  }

  /** A node that is not started yet; nothing is written or launched until {@link #start()}. */
  public static EmbeddedCassandra create(EmbeddedCassandraConfig config) {
    return new EmbeddedCassandra(config);
  }

  /** The configuration this node was created with (ports as configured, 0 = automatic). */
  public EmbeddedCassandraConfig config() {
    return config;
  }

  /**
   * Starts the node and blocks until its CQL port accepts TCP connections (the port opens at the
   * very end of Cassandra's start-up). Does nothing if it is running. Kills a node that a dead
   * previous owner left running in the same work dir.
   *
   * @throws EmbeddedCassandraException if the child exits or the port stays closed for {@link
   *     EmbeddedCassandraConfig#startTimeout()}; the message ends with the logs' last lines
   */
  public void start() {
    synchronized (lock) {
      Process current = process;
      if (current != null) {
        if (current.isAlive()) {
          return;
        }
        LOG.warn(
            "[cassandra] pid {} had exited with code {}; starting again",
            current.pid(),
            current.exitValue());
        process = null;
        pidFile.delete();
      }
      String classpath = CassandraCommandLine.readClasspath(config.classpathFile());
      pidFile.killLeftover();
      boolean firstStart = ports == null;
      boolean automaticPorts = config.cqlPort() == 0 || config.storagePort() == 0;
      // Automatic ports can be taken between choosing and binding: choose again once.
      int attempts = firstStart && automaticPorts ? 2 : 1;
      for (int attempt = 1; ; attempt++) {
        CassandraPorts chosen = portsForLaunch(attempt > 1);
        try {
          launch(classpath, chosen);
          return;
        } catch (PortClashException e) {
          if (attempt >= attempts) {
            throw new EmbeddedCassandraException(String.valueOf(e.getMessage()));
          }
          LOG.info("[cassandra] a chosen port was taken meanwhile; choosing new ports");
        }
      }
    }
  }

  /** Graceful stop: SIGTERM, up to 30 s for Cassandra to drain and flush, then SIGKILL. */
  public void stop() {
    abortLaunch();
    synchronized (lock) {
      Process current = process;
      if (current == null) {
        return;
      }
      // Cleared first: the exit watcher then knows this exit is intended.
      process = null;
      long startNanos = System.nanoTime();
      current.destroy();
      if (!waitFor(current, STOP_TIMEOUT)) {
        LOG.warn(
            "[cassandra] pid {} did not stop within {}; killing it", current.pid(), STOP_TIMEOUT);
        current.destroyForcibly();
        waitFor(current, KILL_TIMEOUT);
      }
      pidFile.delete();
      LOG.info("[cassandra] stopped pid {} in {} ms", current.pid(), millisSince(startNanos));
    }
  }

  /**
   * SIGKILL now, as a crash would (for tests). Whatever was not flushed is in the commit log, which
   * the next {@link #start()} replays.
   */
  public void kill() {
    abortLaunch();
    synchronized (lock) {
      Process current = process;
      if (current == null) {
        return;
      }
      process = null;
      current.destroyForcibly();
      waitFor(current, KILL_TIMEOUT);
      pidFile.delete();
      LOG.info("[cassandra] killed pid {}", current.pid());
    }
  }

  /** Whether the node started and its process is still alive. */
  public boolean isRunning() {
    Process current = process;
    return current != null && current.isAlive();
  }

  /**
   * {@code 127.0.0.1:cqlPort}; stable across restarts.
   *
   * @throws IllegalStateException if the port is automatic and no start has chosen it yet
   */
  public InetSocketAddress cqlAddress() {
    CassandraPorts current = ports;
    if (current != null) {
      return current.cqlAddress();
    }
    if (config.cqlPort() != 0) {
      return new InetSocketAddress(CassandraPorts.LOOPBACK, config.cqlPort());
    }
    throw new IllegalStateException("The CQL port is chosen at the first start()");
  }

  /** {@value #LOCAL_DATACENTER}, the datacenter the node is in. */
  public String localDatacenter() {
    return LOCAL_DATACENTER;
  }

  /**
   * The process id of the running (or last) node.
   *
   * @throws IllegalStateException if it was never launched
   */
  public long pid() {
    long pid = lastPid;
    if (pid < 0) {
      throw new IllegalStateException("Cassandra was never started");
    }
    return pid;
  }

  /** Same as {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  /** Blocks until the node exits, for {@link EmbeddedCassandraMain}; -1 if it is not running. */
  int waitForExit() throws InterruptedException {
    Process current = process;
    return current == null ? -1 : current.waitFor();
  }

  private CassandraPorts portsForLaunch(boolean rechoose) {
    CassandraPorts current = ports;
    if (current == null || rechoose) {
      current = CassandraPorts.choose(config.cqlPort(), config.storagePort());
      ports = current;
    }
    return current;
  }

  private void launch(String classpath, CassandraPorts chosen) {
    int busy = chosen.firstBusy();
    if (busy != 0) {
      throw new PortClashException(
          "Port " + busy + " on 127.0.0.1 is in use; Cassandra needs it (" + chosen + ")");
    }
    try {
      files.write(config, chosen);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write Cassandra's configuration", e);
    }
    List<String> command =
        CassandraCommandLine.command(
            config,
            files,
            classpath,
            RootPrivileges.setprivDroppingIpcLock().orElse(null),
            TimerSlack.shell().orElse(null));
    LogTail systemTail = LogTail.from(files.systemLog());
    LogTail stdoutTail = LogTail.from(files.stdoutLog());
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(config.workDir().toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(files.stdoutLog().toFile()));
    CassandraCommandLine.adjustEnvironment(builder.environment());

    long startNanos = System.nanoTime();
    Process child;
    try {
      child = builder.start();
      child.getOutputStream().close();
      lastPid = child.pid();
      pidFile.write(child.pid());
    } catch (IOException e) {
      throw new EmbeddedCassandraException("Cannot launch " + command.get(0), e);
    }
    launching = child;
    LOG.info(
        "[cassandra] starting pid {} ({} profile, heap {}, cql 127.0.0.1:{}, storage {}, dir {})",
        child.pid(),
        config.profile(),
        config.heap(),
        chosen.cql(),
        chosen.storage(),
        config.workDir());
    try {
      String failure = awaitCqlPort(child, chosen.cqlAddress(), startNanos);
      if (failure != null) {
        child.destroyForcibly();
        waitFor(child, KILL_TIMEOUT);
        pidFile.delete();
        String logs = systemTail.section(LOG_TAIL_LINES) + stdoutTail.section(LOG_TAIL_LINES);
        String message = "Cassandra (pid " + child.pid() + ") " + failure + logs;
        if (logs.contains("Address already in use")) {
          throw new PortClashException(message);
        }
        throw new EmbeddedCassandraException(message);
      }
    } finally {
      launching = null;
    }
    process = child;
    child.onExit().thenAccept(this::onExit);
    LOG.info(
        "[cassandra] started in {} ms: cql={} pid={}",
        millisSince(startNanos),
        chosen.cqlAddress(),
        child.pid());
  }

  /** Polls until the CQL port accepts a connection; returns null then, else why not. */
  private @Nullable String awaitCqlPort(Process child, InetSocketAddress cql, long startNanos) {
    long deadline = startNanos + config.startTimeout().toNanos();
    while (true) {
      if (!child.isAlive()) {
        return "exited with code " + child.exitValue() + " during start-up";
      }
      if (accepts(cql)) {
        return null;
      }
      if (System.nanoTime() - deadline > 0) {
        return "did not open CQL port " + cql + " within " + config.startTimeout();
      }
      LockSupport.parkNanos(POLL_NANOS);
      if (Thread.currentThread().isInterrupted()) {
        return "start was interrupted";
      }
    }
  }

  private static boolean accepts(InetSocketAddress address) {
    try (Socket socket = new Socket()) {
      socket.connect(address, CONNECT_TIMEOUT_MILLIS);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private void abortLaunch() {
    Process starting = launching;
    if (starting != null) {
      LOG.info("[cassandra] aborting the start of pid {}", starting.pid());
      starting.destroyForcibly();
    }
  }

  private void onExit(Process exited) {
    // stop() and kill() clear the field first, so a match means nobody asked for this exit.
    if (process == exited) {
      LOG.warn(
          "[cassandra] pid {} exited unexpectedly with code {}; see {}",
          exited.pid(),
          exited.exitValue(),
          files.systemLog());
    }
  }

  private static boolean waitFor(Process child, Duration timeout) {
    try {
      return child.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      child.destroyForcibly();
      return false;
    }
  }

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  /** Where the node keeps its logs; for messages and documentation. */
  Path systemLog() {
    return files.systemLog();
  }

  /** A launch failed because a port was taken; retried with new ports on a first start. */
  private static final class PortClashException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PortClashException(String message) {
      super(message);
    }
  }
}
