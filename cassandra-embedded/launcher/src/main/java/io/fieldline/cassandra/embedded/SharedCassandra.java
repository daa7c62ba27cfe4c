package io.fieldline.cassandra.embedded;

import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one Cassandra node of an integration-test JVM (Failsafe runs one JVM per module), started
 * lazily by the first {@link #get()} and shared by every test class, each using its own keyspace.
 *
 * <p>{@link Profile#TEST} profile, free ports, work dir {@code
 * ${java.io.tmpdir}/fieldline-it-cassandra-<pid>}, and request timeouts raised to 10 s for busy
 * build machines. A JVM shutdown hook kills the node and deletes the work dir; work dirs left by
 * test JVMs that were themselves killed are cleaned up (with their nodes) by the next {@code
 * get()}.
 */
public final class SharedCassandra {

  private static final Logger LOG = LoggerFactory.getLogger(SharedCassandra.class);

  static final String WORK_DIR_PREFIX = "fieldline-it-cassandra-";

  /** Raised from 2 s / 5 s: a test node shares 2 cores with the build and the test JVM. */
  static final Map<String, String> EXTRA_YAML =
      Map.of("write_request_timeout", "10000ms", "read_request_timeout", "10000ms");

  private static @Nullable EmbeddedCassandra instance;

  /** Why the first start failed; later calls fail fast instead of waiting for it again. */
  private static @Nullable RuntimeException firstFailure;

  private static boolean startedOnce;

  private SharedCassandra() {}

  /**
   * The shared node, started (again, if a test stopped or killed it). Tests may stop, kill and
   * restart it; they must not {@code close()} it for good, the JVM does that.
   *
   * @throws EmbeddedCassandraException if it cannot be created or started
   */
  public static synchronized EmbeddedCassandra get() {
    if (firstFailure != null) {
      throw new EmbeddedCassandraException(
          "The shared Cassandra failed to start earlier in this JVM", firstFailure);
    }
    try {
      if (instance == null) {
        instance = create();
      }
      instance.start();
      startedOnce = true;
      return instance;
    } catch (RuntimeException e) {
      if (!startedOnce) {
        firstFailure = e;
      }
      throw e;
    }
  }

  private static EmbeddedCassandra create() {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    cleanUpOrphans(tmp);
    Path workDir = tmp.resolve(WORK_DIR_PREFIX + ProcessHandle.current().pid());
    EmbeddedCassandraConfig config =
        EmbeddedCassandraConfig.defaults(workDir, Profile.TEST).withExtraYaml(EXTRA_YAML);
    EmbeddedCassandra cassandra = EmbeddedCassandra.create(config);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  cassandra.kill();
                  deleteRecursively(workDir);
                },
                "fieldline-shared-cassandra-shutdown"));
    return cassandra;
  }

  /** Work dirs of test JVMs that no longer exist: kill their node (if still ours), delete them. */
  static void cleanUpOrphans(Path tmp) {
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, WORK_DIR_PREFIX + "*")) {
      for (Path dir : dirs) {
        ownerPid(dir)
            .filter(pid -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
            .ifPresent(
                pid -> {
                  LOG.info("[cassandra] cleaning up {} of dead test JVM {}", dir, pid);
                  new PidFile(new CassandraConfFiles(dir)).killLeftover();
                  deleteRecursively(dir);
                });
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("[cassandra] cannot clean up old test work dirs in {}", tmp, e);
    }
  }

  private static Optional<Long> ownerPid(Path dir) {
    try {
      return Optional.of(
          Long.parseLong(dir.getFileName().toString().substring(WORK_DIR_PREFIX.length())));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException | RuntimeException e) {
      LOG.warn("[cassandra] cannot delete {}", dir, e);
    }
  }
}
