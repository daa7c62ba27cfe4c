package io.fieldline.cassandra.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether to launch Cassandra under {@code setpriv --bounding-set=-ipc_lock}. Cassandra
 * calls {@code mlockall} at boot; as root that succeeds and pins the whole heap (measured: 2.8 GB
 * locked for a 1G heap). Dropping {@code CAP_IPC_LOCK} gives the harmless non-root behaviour
 * ({@code Unable to lock JVM memory (ENOMEM)}). Decided once per JVM; thread-safe.
 */
final class RootPrivileges {

  private static final Logger LOG = LoggerFactory.getLogger(RootPrivileges.class);

  private static final Path PROC_STATUS = Path.of("/proc/self/status");

  private static final List<Path> SETPRIV_CANDIDATES =
      List.of(Path.of("/usr/bin/setpriv"), Path.of("/bin/setpriv"), Path.of("/usr/sbin/setpriv"));

  private RootPrivileges() {}

  /** The {@code setpriv} to wrap the launch in, or empty when not root or it does not work. */
  static Optional<Path> setprivDroppingIpcLock() {
    return Holder.SETPRIV;
  }

  /** Lazy, once per JVM: the probe starts a process. */
  private static final class Holder {
    static final Optional<Path> SETPRIV = isRoot() ? findWorkingSetpriv() : Optional.empty();
  }

  /** True when the effective uid is 0 (Linux {@code /proc/self/status}, second Uid field). */
  static boolean isRoot() {
    try {
      for (String line : Files.readAllLines(PROC_STATUS)) {
        if (line.startsWith("Uid:")) {
          String[] fields = line.substring(4).trim().split("\\s+");
          return fields.length > 1 && fields[1].equals("0");
        }
      }
    } catch (IOException e) {
      LOG.debug("[cassandra] cannot read {}, assuming not root", PROC_STATUS, e);
    }
    return false;
  }

  private static Optional<Path> findWorkingSetpriv() {
    for (Path candidate : SETPRIV_CANDIDATES) {
      if (Files.isExecutable(candidate) && probe(candidate)) {
        return Optional.of(candidate);
      }
    }
    LOG.warn(
        "[cassandra] running as root without a working setpriv: Cassandra's mlockall will pin"
            + " its whole heap in memory");
    return Optional.empty();
  }

  /** Dropping a bounding capability needs CAP_SETPCAP, which some containers lack. */
  private static boolean probe(Path candidate) {
    try {
      Process process =
          new ProcessBuilder(candidate.toString(), "--bounding-set=-ipc_lock", "--", "true")
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return false;
      }
      return process.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
