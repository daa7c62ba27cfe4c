package io.fieldline.cassandra.embedded;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Sets the Linux timer slack of the child JVM: a shell writes it to {@code
 * /proc/self/timerslack_ns} and then {@code exec}s the JVM, whose threads all inherit it (the value
 * survives {@code execve} and is copied to every new thread). A failed write is reported on the
 * child's output and the JVM starts anyway with the kernel's default.
 *
 * <p>Why: see {@link EmbeddedCassandraConfig#timerSlack()}.
 */
final class TimerSlack {

  private static final Path PROC_FILE = Path.of("/proc/self/timerslack_ns");
  private static final Path SHELL = Path.of("/bin/sh");

  // $0 names the script in error messages, $1 is the slack, the rest the command to exec.
  private static final String SCRIPT =
      "echo \"$1\" > /proc/self/timerslack_ns"
          + " || echo \"fieldline: could not set the timer slack; kernel default kept\" >&2;"
          + " shift; exec \"$@\"";

  private TimerSlack() {}

  /** The shell that can set the slack, or empty where the kernel has no per-process slack file. */
  static Optional<Path> shell() {
    return Files.exists(PROC_FILE) && Files.isExecutable(SHELL)
        ? Optional.of(SHELL)
        : Optional.empty();
  }

  /** The words to put before the JVM's command to start it with {@code slack}. */
  static List<String> prefix(Path shell, Duration slack) {
    return List.of(
        shell.toString(), "-c", SCRIPT, "fieldline-cassandra", Long.toString(slack.toNanos()));
  }
}
