package io.fieldline.cassandra.embedded;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How to run one embedded Cassandra node: where it keeps its files, which jars and which {@code
 * java} it runs with, its ports and its tuning profile. Immutable; build it with {@link
 * #defaults(Path, Profile)} and adjust it with the {@code with…} copies. The compact constructor
 * validates every field and reports all problems at once.
 *
 * @param workDir the node's home: {@code conf/}, {@code data/}, {@code logs/} and {@code
 *     cassandra.pid} live here; data is kept between runs
 * @param classpathFile the file written by {@code cassandra-embedded/runtime}: the child JVM's
 *     classpath, {@code ':'}-separated absolute jar paths
 * @param javaExecutable a JDK 11..17 {@code java} (Cassandra 5.0 dies at boot on JDK 24+)
 * @param cqlPort the native-protocol (CQL) port; 0 picks a free port at the first start and keeps
 *     it for later restarts
 * @param storagePort the inter-node port; 0 picks a free port (the SSL storage port is always
 *     picked freely)
 * @param profile start-up speed ({@link Profile#TEST}) or steady-state throughput ({@link
 *     Profile#SERVER})
 * @param heap the maximum Java heap, a JVM size such as {@code "1G"} or {@code "768M"}; at least
 *     256M
 * @param startTimeout how long {@link EmbeddedCassandra#start()} waits for the CQL port
 * @param timerSlack the Linux timer slack of every thread of the child JVM, or zero to leave the
 *     one it inherits (normally the kernel's 50 µs). Cassandra's request threads wait for work in
 *     timed sleeps of 10 µs and up for 10 ms after every task, so at a few hundred requests per
 *     second they wake tens of thousands of times per second; a slack of 1 ms lets the kernel merge
 *     those wake-ups and cuts the node's CPU at 1,000 requests per second by about 60 %
 *     (docs/performance.md), at the price of up to that much added wait before an idle worker picks
 *     up a request. Ignored where {@code /proc/self/timerslack_ns} does not exist
 * @param extraYaml top-level {@code cassandra.yaml} keys written verbatim after (and therefore
 *     overriding) the generated ones, e.g. {@code write_request_timeout -> 5000ms}; the port keys
 *     are managed through {@code cqlPort}/{@code storagePort} and rejected here
 */
public record EmbeddedCassandraConfig(
    Path workDir,
    Path classpathFile,
    Path javaExecutable,
    int cqlPort,
    int storagePort,
    Profile profile,
    String heap,
    Duration startTimeout,
    Duration timerSlack,
    Map<String, String> extraYaml) {

  /** What the node is tuned for. */
  public enum Profile {
    /**
     * Fastest start for tests: C1-only JIT, no jamm agent, no fsync ({@code cassandra.skip_sync}:
     * data survives {@link EmbeddedCassandra#kill()}, not a machine crash), fixed memtable row
     * overhead, heap from 512M up to {@link #heap()}.
     */
    TEST,
    /**
     * Steady-state throughput: C2 JIT, jamm agent, fixed heap, {@code offheap_objects} memtables,
     * periodic commit log synced every 10 s.
     */
    SERVER
  }

  /** The default heap of both profiles. */
  public static final String DEFAULT_HEAP = "1G";

  /** The default time {@link EmbeddedCassandra#start()} waits for CQL. */
  public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(120);

  /** The default {@link #timerSlack()}: measured as the knee on 2 cores (docs/performance.md). */
  public static final Duration DEFAULT_TIMER_SLACK = Duration.ofMillis(1);

  /** The largest {@link #timerSlack()} accepted; more only adds latency. */
  static final Duration MAX_TIMER_SLACK = Duration.ofMillis(100);

  /** System property naming the runtime module's classpath file (set by Failsafe). */
  public static final String CLASSPATH_FILE_PROPERTY = "fieldline.cassandra.classpath-file";

  /** Environment variable naming a JDK 17 {@code java} (or JDK home) for the child JVM. */
  public static final String JAVA_ENV = "FIELDLINE_CASSANDRA_JAVA";

  static final long MIN_HEAP_BYTES = 256L << 20;

  /** Yaml keys derived from the port fields; overriding them would break {@code cqlAddress()}. */
  static final Set<String> MANAGED_YAML_KEYS =
      Set.of("native_transport_port", "storage_port", "ssl_storage_port");

  private static final Pattern HEAP = Pattern.compile("([1-9][0-9]{0,9})([kKmMgG]?)");
  private static final Pattern YAML_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /** Validates every field; throws {@link IllegalArgumentException} listing all problems. */
  public EmbeddedCassandraConfig {
    List<String> errors = new ArrayList<>();
    requireNonNull(workDir, "workDir", errors);
    requireNonNull(classpathFile, "classpathFile", errors);
    requireNonNull(javaExecutable, "javaExecutable", errors);
    requireNonNull(profile, "profile", errors);
    checkPort(cqlPort, "cqlPort", errors);
    checkPort(storagePort, "storagePort", errors);
    if (cqlPort != 0 && cqlPort == storagePort) {
      errors.add("cqlPort and storagePort must differ, both are " + cqlPort);
    }
    if (heap == null) {
      errors.add("heap must not be null");
    } else if (parseHeapBytes(heap) < 0) {
      errors.add("heap must be a JVM size such as 1G or 768M, was '" + heap + "'");
    } else if (parseHeapBytes(heap) < MIN_HEAP_BYTES) {
      errors.add("heap must be at least 256M, was " + heap);
    }
    if (startTimeout == null) {
      errors.add("startTimeout must not be null");
    } else if (startTimeout.isNegative() || startTimeout.isZero()) {
      errors.add("startTimeout must be positive, was " + startTimeout);
    }
    if (timerSlack == null) {
      errors.add("timerSlack must not be null (use Duration.ZERO for the kernel's default)");
    } else if (timerSlack.isNegative() || timerSlack.compareTo(MAX_TIMER_SLACK) > 0) {
      errors.add("timerSlack must be between 0 and " + MAX_TIMER_SLACK + ", was " + timerSlack);
    }
    if (extraYaml == null) {
      errors.add("extraYaml must not be null (use an empty map)");
    } else {
      extraYaml.forEach((key, value) -> checkYamlEntry(key, value, errors));
    }
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(
          "Invalid embedded Cassandra configuration:\n  - " + String.join("\n  - ", errors));
    }
    workDir = workDir.toAbsolutePath().normalize();
    classpathFile = classpathFile.toAbsolutePath().normalize();
    extraYaml = Collections.unmodifiableMap(new LinkedHashMap<>(extraYaml));
  }

  /**
   * The configuration most callers want: free ports, 1G heap, 120 s start timeout, no extra yaml,
   * the classpath file and the {@code java} found as described on {@link #classpathFile()} and
   * {@link #javaExecutable()}.
   *
   * <p>The classpath file is the {@value #CLASSPATH_FILE_PROPERTY} system property if set, else
   * {@code cassandra-embedded/runtime/target/cassandra.classpath} found by walking up from {@code
   * user.dir}. The {@code java} is the current JVM's if its feature version is 11..17, else {@code
   * $FIELDLINE_CASSANDRA_JAVA}, else {@code /usr/lib/jvm/java-17-openjdk-amd64/bin/java}.
   *
   * @throws EmbeddedCassandraException if no classpath file or no suitable {@code java} is found
   */
  public static EmbeddedCassandraConfig defaults(Path workDir, Profile profile) {
    return new EmbeddedCassandraConfig(
        workDir,
        DefaultLocations.classpathFile(),
        DefaultLocations.javaExecutable(),
        0,
        0,
        profile,
        DEFAULT_HEAP,
        DEFAULT_START_TIMEOUT,
        DEFAULT_TIMER_SLACK,
        Map.of());
  }

  /** A copy with {@link #workDir()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withWorkDir(Path value) {
    return new EmbeddedCassandraConfig(
        value,
        classpathFile,
        javaExecutable,
        cqlPort,
        storagePort,
        profile,
        heap,
        startTimeout,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #classpathFile()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withClasspathFile(Path value) {
    return new EmbeddedCassandraConfig(
        workDir,
        value,
        javaExecutable,
        cqlPort,
        storagePort,
        profile,
        heap,
        startTimeout,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #javaExecutable()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withJavaExecutable(Path value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        value,
        cqlPort,
        storagePort,
        profile,
        heap,
        startTimeout,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #cqlPort()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withCqlPort(int value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        javaExecutable,
        value,
        storagePort,
        profile,
        heap,
        startTimeout,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #storagePort()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withStoragePort(int value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        javaExecutable,
        cqlPort,
        value,
        profile,
        heap,
        startTimeout,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #profile()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withProfile(Profile value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        javaExecutable,
        cqlPort,
        storagePort,
        value,
        heap,
        startTimeout,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #heap()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withHeap(String value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        javaExecutable,
        cqlPort,
        storagePort,
        profile,
        value,
        startTimeout,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #startTimeout()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withStartTimeout(Duration value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        javaExecutable,
        cqlPort,
        storagePort,
        profile,
        heap,
        value,
        timerSlack,
        extraYaml);
  }

  /** A copy with {@link #timerSlack()} replaced; validated like the original. */
  public EmbeddedCassandraConfig withTimerSlack(Duration value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        javaExecutable,
        cqlPort,
        storagePort,
        profile,
        heap,
        startTimeout,
        value,
        extraYaml);
  }

  /** A copy whose extra yaml is exactly {@code value} (replacing the current entries). */
  public EmbeddedCassandraConfig withExtraYaml(Map<String, String> value) {
    return new EmbeddedCassandraConfig(
        workDir,
        classpathFile,
        javaExecutable,
        cqlPort,
        storagePort,
        profile,
        heap,
        startTimeout,
        timerSlack,
        value);
  }

  /** A copy with one more (or one replaced) extra yaml entry. */
  public EmbeddedCassandraConfig withExtraYaml(String key, String value) {
    Map<String, String> copy = new LinkedHashMap<>(extraYaml);
    copy.put(key, value);
    return withExtraYaml(copy);
  }

  /** {@link #heap()} in bytes. */
  public long heapBytes() {
    return parseHeapBytes(heap);
  }

  /** A JVM size ({@code 1G}, {@code 768m}, {@code 1048576}) in bytes, or -1 if malformed. */
  static long parseHeapBytes(String size) {
    Matcher matcher = HEAP.matcher(size);
    if (!matcher.matches()) {
      return -1;
    }
    long number = Long.parseLong(matcher.group(1));
    int shift =
        switch (matcher.group(2).toUpperCase(Locale.ROOT)) {
          case "K" -> 10;
          case "M" -> 20;
          case "G" -> 30;
          default -> 0;
        };
    return number > (Long.MAX_VALUE >> shift) ? -1 : number << shift;
  }

  private static void requireNonNull(Object value, String name, List<String> errors) {
    if (value == null) {
      errors.add(name + " must not be null");
    }
  }

  private static void checkPort(int port, String name, List<String> errors) {
    if (port < 0 || port > 65535) {
      errors.add(name + " must be 0 (pick a free port) or 1..65535, was " + port);
    }
  }

  private static void checkYamlEntry(String key, String value, List<String> errors) {
    if (key == null || !YAML_KEY.matcher(key).matches()) {
      errors.add("extraYaml key must be a plain top-level yaml key, was '" + key + "'");
    } else if (MANAGED_YAML_KEYS.contains(key)) {
      errors.add("extraYaml must not set " + key + ": use cqlPort/storagePort");
    } else if (value == null || value.isBlank()) {
      errors.add("extraYaml value of " + key + " must not be blank");
    }
  }
}
