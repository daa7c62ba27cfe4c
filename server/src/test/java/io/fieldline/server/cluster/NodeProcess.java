package io.fieldline.server.cluster;

import io.fieldline.cluster.Member;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One Fieldline node as a separate JVM ({@code io.fieldline.server.Main} on the server's classpath,
 * configured by environment variables, as {@code scripts/local-cluster.sh} starts it). Every
 * process started here is killed at the latest when the test JVM exits.
 */
public final class NodeProcess {

  private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();
  private static final Pattern BANNER_MQTT =
      Pattern.compile("(?m)^  MQTT +mqtt://127\\.0\\.0\\.1:(\\d+)$");
  private static final Pattern BANNER_HTTP =
      Pattern.compile("(?m)^  HTTP +http://127\\.0\\.0\\.1:(\\d+) ");

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> STARTED.forEach(Process::destroyForcibly), "node-process-reaper"));
  }

  private final String nodeId;
  private final Process process;
  private final Path log;
  private final long logStart;
  private volatile @Nullable Member member;

  private NodeProcess(String nodeId, Process process, Path log, long logStart) {
    this.nodeId = nodeId;
    this.process = process;
    this.log = log;
    this.logStart = logStart;
  }

  /** Launches the node; it is not ready yet (see {@link LocalCluster#awaitReady}). */
  static NodeProcess launch(String nodeId, Map<String, String> env, Path workDir) {
    try {
      Path dir = Files.createDirectories(workDir.resolve(nodeId));
      Path log = dir.resolve("node.log");
      // A restarted node appends to the same log: what this run printed starts here.
      long logStart = Files.exists(log) ? Files.size(log) : 0;
      List<String> command =
          new ArrayList<>(
              List.of(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xms64m",
                  "-Xmx384m",
                  "-XX:+UseSerialGC",
                  "-XX:TieredStopAtLevel=1",
                  "-ea",
                  "-cp",
                  classpath(),
                  "io.fieldline.server.Main"));
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      builder.environment().keySet().removeIf(key -> key.startsWith("FIELDLINE_"));
      builder.environment().putAll(env);
      builder.environment().put("FIELDLINE_NODE_ID", nodeId);
      builder.environment().put("FIELDLINE_DATA_DIR", dir.resolve("data").toString());
      Process process = builder.start();
      STARTED.add(process);
      return new NodeProcess(nodeId, process, log, logStart);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String classpath() throws IOException {
    Path classes = Path.of("target", "classes").toAbsolutePath();
    Path dependencies = Path.of("target", "server.classpath").toAbsolutePath();
    return classes + java.io.File.pathSeparator + Files.readString(dependencies).trim();
  }

  public String nodeId() {
    return nodeId;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public Path log() {
    return log;
  }

  void registered(Member registered) {
    member = registered;
  }

  Member member() {
    Member known = member;
    if (known == null) {
      throw new IllegalStateException(nodeId + " has not registered");
    }
    return known;
  }

  public int mqttPort() {
    return port(member().mqtt());
  }

  public int httpPort() {
    return port(member().http());
  }

  /**
   * The ports this run printed in its start-up banner ({@code Banner}), as a member without gRPC:
   * how a node without ZooKeeper (no znode to read them from) tells which free ports it bound; null
   * until the banner is out.
   */
  @Nullable Member announced() {
    String printed;
    try (InputStream in = Files.newInputStream(log)) {
      in.skipNBytes(logStart);
      printed = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return null;
    }
    Matcher mqtt = BANNER_MQTT.matcher(printed);
    Matcher http = BANNER_HTTP.matcher(printed);
    if (!mqtt.find() || !http.find()) {
      return null;
    }
    return new Member(nodeId, "127.0.0.1:" + mqtt.group(1), "127.0.0.1:" + http.group(1), "");
  }

  private static int port(String hostPort) {
    return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
  }

  /** SIGKILL: a crash. */
  public void kill() {
    process.destroyForcibly();
    waitFor(10);
  }

  /** SIGTERM: the graceful shutdown. */
  public void stop() {
    process.destroy();
    if (!waitFor(60)) {
      kill();
    }
  }

  /** SIGSTOP: the process freezes (a long GC pause, a VM migration): no ZooKeeper heartbeats. */
  void suspend() {
    signal("STOP");
  }

  /** SIGCONT. */
  void resume() {
    signal("CONT");
  }

  private void signal(String name) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private boolean waitFor(int seconds) {
    try {
      boolean exited = process.waitFor(seconds, TimeUnit.SECONDS);
      if (exited) {
        STARTED.remove(process);
      }
      return exited;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The last lines of the node's output, for failure messages. */
  public String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public String toString() {
    return nodeId + "(pid " + process.pid() + ")";
  }
}
