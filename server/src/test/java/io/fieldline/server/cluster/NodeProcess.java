package io.fieldline.server.cluster;

import io.fieldline.cluster.Member;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One Fieldline node as a separate JVM ({@code io.fieldline.server.Main} on the server's classpath,
 * configured by environment variables, as {@code scripts/local-cluster.sh} starts it). Every
 * process started here is killed at the latest when the test JVM exits.
 */
final class NodeProcess {

  private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> STARTED.forEach(Process::destroyForcibly), "node-process-reaper"));
  }

  private final String nodeId;
  private final Process process;
  private final Path log;
  private volatile @Nullable Member member;

  private NodeProcess(String nodeId, Process process, Path log) {
    this.nodeId = nodeId;
    this.process = process;
    this.log = log;
  }

  /** Launches the node; it is not ready yet (see {@link LocalCluster#awaitReady}). */
  static NodeProcess launch(String nodeId, Map<String, String> env, Path workDir) {
    try {
      Path dir = Files.createDirectories(workDir.resolve(nodeId));
      Path log = dir.resolve("node.log");
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
      return new NodeProcess(nodeId, process, log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String classpath() throws IOException {
    Path classes = Path.of("target", "classes").toAbsolutePath();
    Path dependencies = Path.of("target", "server.classpath").toAbsolutePath();
    return classes + java.io.File.pathSeparator + Files.readString(dependencies).trim();
  }

  String nodeId() {
    return nodeId;
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  Path log() {
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

  int mqttPort() {
    return port(member().mqtt());
  }

  int httpPort() {
    return port(member().http());
  }

  private static int port(String hostPort) {
    return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
  }

  /** SIGKILL: a crash. */
  void kill() {
    process.destroyForcibly();
    waitFor(10);
  }

  /** SIGTERM: the graceful shutdown. */
  void stop() {
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
  String tail() {
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
