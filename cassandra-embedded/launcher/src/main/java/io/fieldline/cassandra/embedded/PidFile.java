package io.fieldline.cassandra.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code workDir/cassandra.pid}: written after each launch, removed after each stop. When the JVM
 * that owned a node died without stopping it (kill -9 of a test JVM), the next start in the same
 * work dir finds the pid here and kills the orphan, but only if that process is still a
 * CassandraDaemon configured from this work dir's yaml. Nothing else is ever killed.
 */
final class PidFile {

  private static final Logger LOG = LoggerFactory.getLogger(PidFile.class);

  private static final Duration EXIT_WAIT = Duration.ofSeconds(10);

  private final Path file;
  private final String configArgument;

  PidFile(CassandraConfFiles files) {
    this.file = files.pidFile();
    this.configArgument = "-Dcassandra.config=" + files.yaml().toUri();
  }

  void write(long pid) throws IOException {
    Files.writeString(file, pid + "\n", StandardCharsets.UTF_8);
  }

  void delete() {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.warn("[cassandra] cannot delete {}", file, e);
    }
  }

  OptionalLong read() {
    try {
      return OptionalLong.of(
          Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).strip()));
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Kills the node a previous owner left running in this work dir, if any, and waits for it to exit
   * so that its ports and files are free.
   *
   * @return whether a leftover node was killed
   */
  boolean killLeftover() {
    OptionalLong pid = read();
    if (pid.isEmpty()) {
      return false;
    }
    Optional<ProcessHandle> handle = ProcessHandle.of(pid.getAsLong());
    if (handle.isEmpty() || !handle.get().isAlive()) {
      delete();
      return false;
    }
    if (!isOurCassandra(handle.get())) {
      LOG.info(
          "[cassandra] pid {} from {} is no Cassandra of this work dir; leaving it alone",
          pid.getAsLong(),
          file);
      delete();
      return false;
    }
    LOG.warn(
        "[cassandra] killing leftover Cassandra pid {} of {} (its owner died without stopping it)",
        pid.getAsLong(),
        file.getParent());
    handle.get().destroyForcibly();
    try {
      handle.get().onExit().get(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EmbeddedCassandraException("Interrupted while killing leftover Cassandra", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new EmbeddedCassandraException(
          "Leftover Cassandra pid " + pid.getAsLong() + " did not exit after SIGKILL", e);
    }
    delete();
    return true;
  }

  /** Same main class and same {@code cassandra.config} as this work dir would launch. */
  private boolean isOurCassandra(ProcessHandle handle) {
    String commandLine = commandLine(handle);
    return commandLine.contains(CassandraCommandLine.MAIN_CLASS)
        && commandLine.contains(configArgument);
  }

  /**
   * The full command line, NUL-separated: from {@code /proc/<pid>/cmdline} on Linux (not
   * truncated), else from {@link ProcessHandle.Info}.
   */
  static String commandLine(ProcessHandle handle) {
    Path proc = Path.of("/proc", Long.toString(handle.pid()), "cmdline");
    try {
      return Files.readString(proc, StandardCharsets.UTF_8);
    } catch (IOException e) {
      ProcessHandle.Info info = handle.info();
      return info.command().orElse("")
          + "\0"
          + String.join("\0", info.arguments().orElse(new String[0]));
    }
  }
}
