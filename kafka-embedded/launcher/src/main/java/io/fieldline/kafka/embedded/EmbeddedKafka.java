package io.fieldline.kafka.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Uuid;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real Apache Kafka 4 broker in a child JVM on 127.0.0.1: KRaft, broker and controller in one
 * node, formatted standalone on its first start, 256 MiB of heap. For the Kafka sink's tests and
 * {@code ./fieldline kafka}; not for production.
 *
 * <p>Lifecycle: {@link #start} formats the data dir if needed, launches the child and blocks until
 * an {@link Admin} client's {@code describeCluster} answers; {@link #stop()} (SIGTERM, Kafka's
 * controlled shutdown) and {@link #kill()} (SIGKILL, as a crash) end it; {@link #restart()} brings
 * it back on the same ports with the same data. A JVM shutdown hook stops a broker its owner left
 * running; {@link #close()} stops it and removes the hook.
 *
 * <p>Thread-safe: the lifecycle methods are serialised on this object.
 */
public final class EmbeddedKafka implements AutoCloseable {

  /** How long a start may take before it fails (a first start on a busy machine: ~5 s). */
  public static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);

  private static final Duration FORMAT_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final int LOG_TAIL_LINES = 40;

  private final BrokerFiles files;
  private final Path java;
  private final String classpath;
  private final Map<String, String> serverProperties;
  private final int port;
  private final Thread shutdownHook;

  /** The running broker, null when stopped or killed. Guarded by {@code this}. */
  private @Nullable Process process;

  private long lastPid = -1;
  private boolean closed;

  private EmbeddedKafka(
      BrokerFiles files, String classpath, int port, Map<String, String> serverProperties) {
    this.files = files;
    this.java = Path.of(System.getProperty("java.home"), "bin", "java");
    this.classpath = classpath;
    this.port = port;
    this.serverProperties = serverProperties;
    this.shutdownHook = new Thread(this::stop, "fieldline-kafka-stop-" + port);
  }

  /** Same as {@link #start(Path, int, Map)} without broker overrides. */
  public static EmbeddedKafka start(Path dataDir, int port) {
    return start(dataDir, port, Map.of());
  }

  /**
   * Starts a broker and blocks until it answers {@code describeCluster}.
   *
   * @param dataDir its own directory (created if missing); a dir of an earlier broker keeps that
   *     broker's topics, and a broker a dead owner left running in it is killed first
   * @param port the client port on 127.0.0.1; 0 picks a free one (kept by {@link #restart()})
   * @param brokerProperties broker settings applied last, over ours (e.g. {@code
   *     auto.create.topics.enable=false})
   * @throws EmbeddedKafkaException if formatting or the start fails; the message ends with the
   *     broker's last log lines
   */
  public static EmbeddedKafka start(Path dataDir, int port, Map<String, String> brokerProperties) {
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("port must be 0..65535, was " + port);
    }
    BrokerFiles files = new BrokerFiles(dataDir);
    String classpath = BrokerCommandLine.readClasspath(BrokerCommandLine.classpathFile());
    int brokerPort = port == 0 ? freePort() : port;
    int controllerPort = files.previousControllerPort().orElseGet(EmbeddedKafka::freePort);
    Map<String, String> properties =
        Map.copyOf(
            BrokerFiles.serverProperties(
                brokerPort, controllerPort, files.logDir(), brokerProperties));
    EmbeddedKafka kafka = new EmbeddedKafka(files, classpath, brokerPort, properties);
    synchronized (kafka) {
      kafka.launch();
    }
    Runtime.getRuntime().addShutdownHook(kafka.shutdownHook);
    return kafka;
  }

  /** {@code 127.0.0.1:port}, for a client's {@code bootstrap.servers}. */
  public String bootstrapServers() {
    return BrokerFiles.LOOPBACK + ":" + port;
  }

  /** The client port (the chosen one if started with 0). */
  public int port() {
    return port;
  }

  /** The data dir, absolute. */
  public Path dataDir() {
    return files.dir();
  }

  /** The broker's log: its stdout and stderr across restarts. */
  public Path logFile() {
    return files.log();
  }

  /** Whether the broker is running (started and not stopped, killed or dead). */
  public synchronized boolean isRunning() {
    Process current = process;
    return current != null && current.isAlive();
  }

  /** The pid of the running, or else the last, broker. */
  public synchronized long pid() {
    return lastPid;
  }

  /**
   * Graceful stop: SIGTERM, up to 30 s for Kafka's controlled shutdown, then SIGKILL. Does nothing
   * if it is not running.
   */
  public synchronized void stop() {
    Process current = process;
    if (current == null) {
      return;
    }
    process = null;
    long startNanos = System.nanoTime();
    current.destroy();
    if (!waitFor(current, STOP_TIMEOUT)) {
      LOG.warn("[kafka] pid {} did not stop within {}; killing it", current.pid(), STOP_TIMEOUT);
      current.destroyForcibly();
      waitFor(current, KILL_TIMEOUT);
    }
    files.deletePid(current.pid());
    LOG.info("[kafka] stopped pid {} in {} ms", current.pid(), millisSince(startNanos));
  }

  /**
   * SIGKILL now, as a crash would. Records the broker acknowledged are in its log segments (the
   * page cache survives the process), so {@link #restart()} finds them.
   */
  public synchronized void kill() {
    Process current = process;
    if (current == null) {
      return;
    }
    process = null;
    current.destroyForcibly();
    waitFor(current, KILL_TIMEOUT);
    files.deletePid(current.pid());
    LOG.info("[kafka] killed pid {}", current.pid());
  }

  /**
   * Stops the broker if it runs, then starts it again on the same ports and data dir and blocks
   * until it is ready.
   *
   * @throws IllegalStateException after {@link #close()}
   * @throws EmbeddedKafkaException if the start fails
   */
  public synchronized void restart() {
    if (closed) {
      throw new IllegalStateException("This EmbeddedKafka was closed");
    }
    stop();
    launch();
  }

  /** Stops the broker for good (the data dir stays). */
  @Override
  public synchronized void close() {
    closed = true;
    stop();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // The JVM is shutting down: the hook is running (it may be this very call).
    }
  }

  /** Blocks until the broker exits, for {@link EmbeddedKafkaMain}; -1 if it is not running. */
  int waitForExit() throws InterruptedException {
    Process current;
    synchronized (this) {
      current = process;
    }
    return current == null ? -1 : current.waitFor();
  }

  private void launch() {
    killLeftover();
    files.write(serverProperties);
    if (!files.formatted()) {
      format();
    }
    long logStart = files.logSize();
    long startNanos = System.nanoTime();
    Process child = spawn(BrokerCommandLine.broker(java, classpath, files));
    lastPid = child.pid();
    files.writePid(child.pid());
    LOG.info(
        "[kafka] starting pid {} (bootstrap {}, dir {})",
        child.pid(),
        bootstrapServers(),
        files.dir());
    String failure = awaitReady(child, startNanos + START_TIMEOUT.toNanos());
    if (failure != null) {
      child.destroyForcibly();
      waitFor(child, KILL_TIMEOUT);
      files.deletePid(child.pid());
      throw new EmbeddedKafkaException(
          "Kafka (pid " + child.pid() + ") " + failure + files.logTail(logStart, LOG_TAIL_LINES));
    }
    process = child;
    child.onExit().thenAccept(this::onExit);
    LOG.info(
        "[kafka] ready in {} ms: bootstrap {} pid {}",
        millisSince(startNanos),
        bootstrapServers(),
        child.pid());
  }

  /** Formats the KRaft storage as a standalone (one-voter) quorum with a new cluster id. */
  private void format() {
    long logStart = files.logSize();
    long startNanos = System.nanoTime();
    Process tool =
        spawn(BrokerCommandLine.format(java, classpath, files, Uuid.randomUuid().toString()));
    if (!waitFor(tool, FORMAT_TIMEOUT)) {
      tool.destroyForcibly();
      throw new EmbeddedKafkaException(
          "Formatting " + files.logDir() + " took over " + FORMAT_TIMEOUT);
    }
    if (tool.exitValue() != 0 || !files.formatted()) {
      throw new EmbeddedKafkaException(
          "Formatting "
              + files.logDir()
              + " failed with code "
              + tool.exitValue()
              + files.logTail(logStart, LOG_TAIL_LINES));
    }
    LOG.info("[kafka] formatted {} in {} ms", files.logDir(), millisSince(startNanos));
  }

  private Process spawn(List<String> command) {
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(files.dir().toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(files.log().toFile()));
    BrokerCommandLine.adjustEnvironment(builder.environment());
    try {
      Process child = builder.start();
      child.getOutputStream().close();
      return child;
    } catch (IOException e) {
      throw new EmbeddedKafkaException("Cannot launch " + command.get(0), e);
    }
  }

  /**
   * Waits for the client port to accept connections (cheap, and the client would log a warning per
   * refused connection), then for {@code describeCluster} to answer; null then, else why not.
   */
  private @Nullable String awaitReady(Process child, long deadlineNanos) {
    InetSocketAddress address = new InetSocketAddress(BrokerFiles.LOOPBACK, port);
    while (!accepts(address)) {
      String failure = checkWaiting(child, deadlineNanos);
      if (failure != null) {
        return failure;
      }
      LockSupport.parkNanos(POLL_NANOS);
    }
    Map<String, Object> config =
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrapServers(),
            AdminClientConfig.CLIENT_ID_CONFIG,
            "fieldline-kafka-ready",
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
            2_000,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
            2_000);
    try (Admin admin = Admin.create(config)) {
      while (true) {
        try {
          admin
              .describeCluster(new DescribeClusterOptions().timeoutMs(2_000))
              .nodes()
              .get(2_500, TimeUnit.MILLISECONDS);
          return null;
        } catch (ExecutionException | TimeoutException e) {
          String failure = checkWaiting(child, deadlineNanos);
          if (failure != null) {
            return failure + " (last describeCluster error: " + e.getMessage() + ")";
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return "start was interrupted";
        }
      }
    }
  }

  private static @Nullable String checkWaiting(Process child, long deadlineNanos) {
    if (!child.isAlive()) {
      return "exited with code " + child.exitValue() + " during start-up";
    }
    if (System.nanoTime() - deadlineNanos > 0) {
      return "was not ready within " + START_TIMEOUT;
    }
    if (Thread.currentThread().isInterrupted()) {
      return "start was interrupted";
    }
    return null;
  }

  private static boolean accepts(InetSocketAddress address) {
    try (Socket socket = new Socket()) {
      socket.connect(address, 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Kills the broker a dead owner left running in this data dir (its pid file survived), but only
   * if that process is a Kafka broker started with this dir's {@code server.properties}.
   */
  private void killLeftover() {
    OptionalLong pid = files.readPid();
    if (pid.isEmpty()) {
      return;
    }
    Optional<ProcessHandle> handle =
        ProcessHandle.of(pid.getAsLong()).filter(ProcessHandle::isAlive);
    if (handle.isPresent() && isOurBroker(handle.get())) {
      LOG.warn("[kafka] killing leftover broker pid {} of {}", pid.getAsLong(), files.dir());
      handle.get().destroyForcibly();
      try {
        handle.get().onExit().get(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new EmbeddedKafkaException("Interrupted while killing a leftover broker", e);
      } catch (ExecutionException | TimeoutException e) {
        throw new EmbeddedKafkaException(
            "Leftover broker pid " + pid.getAsLong() + " did not exit after SIGKILL", e);
      }
    }
    files.deletePid();
  }

  private boolean isOurBroker(ProcessHandle handle) {
    String commandLine;
    try {
      // The full command line (the classpath alone is several KiB), NUL-separated.
      commandLine =
          Files.readString(
              Path.of("/proc", Long.toString(handle.pid()), "cmdline"), StandardCharsets.UTF_8);
    } catch (IOException | UncheckedIOException e) {
      commandLine = handle.info().commandLine().orElse("");
    }
    return commandLine.contains(BrokerCommandLine.BROKER_MAIN)
        && commandLine.contains(files.serverProperties().toString());
  }

  private void onExit(Process exited) {
    boolean expected;
    synchronized (this) {
      // stop() and kill() clear the field first, so a match means nobody asked for this exit.
      expected = process != exited;
    }
    if (!expected) {
      LOG.warn(
          "[kafka] pid {} exited unexpectedly with code {}; see {}",
          exited.pid(),
          exited.exitValue(),
          files.log());
    }
  }

  private static int freePort() {
    try (ServerSocket socket =
        new ServerSocket(0, 1, InetAddress.getByName(BrokerFiles.LOOPBACK))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot find a free port on 127.0.0.1", e);
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
}
