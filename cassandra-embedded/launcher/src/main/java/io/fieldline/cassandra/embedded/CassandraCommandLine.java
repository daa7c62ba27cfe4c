package io.fieldline.cassandra.embedded;

import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The child JVM's command line and environment: Cassandra 5.0's {@code jvm17-server.options} and
 * {@code jvm-server.options} reduced to what a single local node needs, plus the profile's start-up
 * or throughput flags. Pure: everything it needs is passed in.
 */
final class CassandraCommandLine {

  static final String MAIN_CLASS = "org.apache.cassandra.service.CassandraDaemon";

  /** The JPMS openings Cassandra 5.0 needs on JDK 17 ({@code conf/jvm17-server.options}). */
  static final List<String> JDK17_MODULE_FLAGS =
      List.of(
          "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
          "--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
          "--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
          "--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED",
          "--add-exports", "java.sql/java.sql=ALL-UNNAMED",
          "--add-exports", "java.base/java.lang.ref=ALL-UNNAMED",
          "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED",
          "--add-exports", "jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
          "--add-exports", "jdk.attach/sun.tools.attach=ALL-UNNAMED",
          "--add-opens", "java.base/java.lang.module=ALL-UNNAMED",
          "--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED",
          "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
          "--add-opens", "java.base/jdk.internal.reflect=ALL-UNNAMED",
          "--add-opens", "java.base/jdk.internal.math=ALL-UNNAMED",
          "--add-opens", "java.base/jdk.internal.module=ALL-UNNAMED",
          "--add-opens", "java.base/jdk.internal.util.jar=ALL-UNNAMED",
          "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
          "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens", "java.base/java.io=ALL-UNNAMED",
          "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED",
          "--add-opens", "jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
          "--add-opens", "java.base/java.lang=ALL-UNNAMED",
          "--add-opens", "java.base/java.util=ALL-UNNAMED");

  /** Inherited variables that would inject options or jars into the child JVM. */
  static final List<String> SCRUBBED_ENV =
      List.of("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH");

  /** The heap a TEST node starts with; it grows up to the configured maximum. */
  static final String TEST_INITIAL_HEAP = "512M";

  private CassandraCommandLine() {}

  /**
   * Reads and checks the runtime module's classpath file.
   *
   * @throws EmbeddedCassandraException if it is missing, empty or names missing jars
   */
  static String readClasspath(Path classpathFile) {
    String classpath;
    try {
      classpath = Files.readString(classpathFile, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new EmbeddedCassandraException(
          "Cannot read the Cassandra classpath file "
              + classpathFile
              + "; build cassandra-embedded/runtime first",
          e);
    }
    List<String> missing =
        Arrays.stream(classpath.split(":"))
            .filter(entry -> entry.isEmpty() || !Files.isRegularFile(Path.of(entry)))
            .toList();
    if (classpath.isEmpty() || !missing.isEmpty()) {
      throw new EmbeddedCassandraException(
          "The Cassandra classpath file "
              + classpathFile
              + " is empty or names missing jars "
              + missing
              + "; rebuild cassandra-embedded/runtime");
    }
    return classpath;
  }

  /**
   * The full command: optionally the {@code setpriv} wrapper, then optionally the {@link
   * TimerSlack} shell (when {@code slackShell} is given and the configured slack is not zero), then
   * {@code java}, flags, classpath and main class.
   */
  static List<String> command(
      EmbeddedCassandraConfig config,
      CassandraConfFiles files,
      String classpath,
      @Nullable Path setpriv,
      @Nullable Path slackShell) {
    List<String> command = new ArrayList<>();
    if (setpriv != null) {
      // As root, mlockall would pin the whole heap; without CAP_IPC_LOCK it fails harmlessly.
      command.add(setpriv.toString());
      command.add("--bounding-set=-ipc_lock");
      command.add("--");
    }
    if (slackShell != null && !config.timerSlack().isZero()) {
      command.addAll(TimerSlack.prefix(slackShell, config.timerSlack()));
    }
    command.add(config.javaExecutable().toString());
    command.addAll(jvmFlags(config, files, classpath));
    command.add("-cp");
    command.add(classpath);
    command.add(MAIN_CLASS);
    return command;
  }

  static List<String> jvmFlags(
      EmbeddedCassandraConfig config, CassandraConfFiles files, String classpath) {
    List<String> flags = new ArrayList<>();
    String heap = config.heap();
    Profile profile = config.profile();
    switch (profile) {
      case TEST -> {
        boolean small =
            config.heapBytes() < EmbeddedCassandraConfig.parseHeapBytes(TEST_INITIAL_HEAP);
        flags.add("-Xms" + (small ? heap : TEST_INITIAL_HEAP));
        flags.add("-Xmx" + heap);
      }
      case SERVER -> {
        flags.add("-Xms" + heap);
        flags.add("-Xmx" + heap);
      }
    }
    flags.addAll(
        List.of(
            "-Xss256k",
            "-XX:+UseG1GC",
            "-XX:+ParallelRefProcEnabled",
            "-XX:MaxTenuringThreshold=1",
            "-XX:G1HeapRegionSize=16m",
            "-XX:G1RSetUpdatingPauseTimePercent=5",
            "-XX:MaxGCPauseMillis=300",
            "-XX:InitiatingHeapOccupancyPercent=70",
            "-XX:+UseThreadPriorities",
            "-XX:+UseTLAB",
            "-XX:+ResizeTLAB",
            "-XX:+PerfDisableSharedMem",
            "-XX:+UseCondCardMark",
            "-XX:+ExitOnOutOfMemoryError",
            // Stock Cassandra runs with assertions on, except in Chronicle.
            "-ea",
            "-da:net.openhft...",
            "-Djava.net.preferIPv4Stack=true",
            "-Djdk.attach.allowAttachSelf=true"));
    flags.addAll(JDK17_MODULE_FLAGS);
    flags.addAll(
        List.of(
            "-Dio.netty.tryReflectionSetAccessible=true",
            "-Dio.netty.allocator.useCacheForAllThreads=true",
            "-Dio.netty.allocator.maxOrder=11",
            "-Dcassandra-foreground=true",
            "-Dcassandra.config=" + files.yaml().toUri(),
            "-Dlogback.configurationFile=" + files.logback(),
            "-Dcassandra.logdir=" + files.logDir(),
            "-Dcassandra.storagedir=" + files.dataDir(),
            "-Dcassandra.triggers_dir=" + files.triggersDir(),
            "-Dchronicle.analytics.disable=true",
            // One node, no peers: nothing to wait for (saves several seconds per start).
            "-Dcassandra.skip_wait_for_gossip_to_settle=0"));
    switch (profile) {
      case TEST -> {
        flags.addAll(
            List.of(
                // C1 only: halves start-up CPU; costs steady-state throughput.
                "-XX:TieredStopAtLevel=1",
                // No fsync at all: as fast as cassandra.unsafesystem, but a SIGKILLed node keeps
                // its data (the page cache survives), while unsafesystem skips the schema
                // flushes and a kill() then loses every keyspace created since the start.
                "-Dcassandra.skip_sync=true",
                // Skips the 2 s row-overhead estimation at boot (180 is what it measures).
                "-Dcassandra.memtable.row_overhead_size=180"));
      }
      case SERVER -> {
        String jamm = jammJar(classpath);
        if (jamm != null) {
          // What the stock scripts do: exact memtable sizing through the instrumentation agent.
          flags.add("-javaagent:" + jamm);
        }
      }
    }
    return flags;
  }

  /** The environment changes for the child: glibc arena cap, no injected JVM options. */
  static void adjustEnvironment(Map<String, String> environment) {
    SCRUBBED_ENV.forEach(environment::remove);
    environment.put("MALLOC_ARENA_MAX", "4");
  }

  static @Nullable String jammJar(String classpath) {
    for (String entry : classpath.split(":")) {
      String name = Path.of(entry).getFileName().toString();
      if (name.startsWith("jamm-") && name.endsWith(".jar")) {
        return entry;
      }
    }
    return null;
  }
}
