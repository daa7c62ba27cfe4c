package io.fieldline.kafka.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Where the broker's jars are and the two command lines of the child JVM: formatting the KRaft
 * storage ({@code kafka-storage.sh format --standalone}) and running the broker ({@code
 * kafka-server-start.sh}). Pure apart from reading the classpath file.
 */
final class BrokerCommandLine {

  /** System property naming the classpath file (set by the root pom for Failsafe). */
  static final String CLASSPATH_FILE_PROPERTY = "fieldline.kafka.classpath-file";

  static final Path RUNTIME_CLASSPATH_FILE =
      Path.of("kafka-embedded", "runtime", "target", "kafka.classpath");

  /** What {@code kafka-server-start.sh} runs. */
  static final String BROKER_MAIN = "kafka.Kafka";

  /** What {@code kafka-storage.sh} runs. */
  static final String STORAGE_TOOL_MAIN = "kafka.tools.StorageTool";

  static final String HEAP = "256m";

  /** Inherited variables that would inject options or jars into the child JVM. */
  static final List<String> SCRUBBED_ENV =
      List.of("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH");

  private BrokerCommandLine() {}

  /**
   * The classpath file: the system property if set, else {@link #RUNTIME_CLASSPATH_FILE} in the
   * working directory or one of its parents.
   */
  static Path classpathFile(
      @Nullable String property, Path startDir, Predicate<Path> isRegularFile) {
    if (property != null && !property.isBlank()) {
      return Path.of(property);
    }
    for (Path dir = startDir.toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve(RUNTIME_CLASSPATH_FILE);
      if (isRegularFile.test(candidate)) {
        return candidate;
      }
    }
    throw new EmbeddedKafkaException(
        "No Kafka classpath file: set -D"
            + CLASSPATH_FILE_PROPERTY
            + "=<file>, or build the runtime module first"
            + " (mvn -pl kafka-embedded/runtime install) so that "
            + RUNTIME_CLASSPATH_FILE
            + " exists in "
            + startDir.toAbsolutePath()
            + " or one of its parents");
  }

  static Path classpathFile() {
    return classpathFile(
        System.getProperty(CLASSPATH_FILE_PROPERTY),
        Path.of(System.getProperty("user.dir")),
        Files::isRegularFile);
  }

  /**
   * Reads and checks the classpath file.
   *
   * @throws EmbeddedKafkaException if it is missing, empty or names missing jars
   */
  static String readClasspath(Path classpathFile) {
    String classpath;
    try {
      classpath = Files.readString(classpathFile, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new EmbeddedKafkaException(
          "Cannot read the Kafka classpath file "
              + classpathFile
              + "; build kafka-embedded/runtime first",
          e);
    }
    List<String> missing =
        Arrays.stream(classpath.split(":"))
            .filter(entry -> entry.isEmpty() || !Files.isRegularFile(Path.of(entry)))
            .toList();
    if (classpath.isEmpty() || !missing.isEmpty()) {
      throw new EmbeddedKafkaException(
          "The Kafka classpath file "
              + classpathFile
              + " is empty or names missing jars "
              + missing
              + "; rebuild kafka-embedded/runtime");
    }
    return classpath;
  }

  /** {@code kafka-storage.sh format --standalone}: a one-voter metadata quorum of this node. */
  static List<String> format(Path java, String classpath, BrokerFiles files, String clusterId) {
    List<String> command = jvm(java, classpath, files, STORAGE_TOOL_MAIN);
    command.addAll(
        List.of(
            "format",
            "--standalone",
            "--cluster-id",
            clusterId,
            "--config",
            files.serverProperties().toString()));
    return command;
  }

  /** {@code kafka-server-start.sh server.properties}. */
  static List<String> broker(Path java, String classpath, BrokerFiles files) {
    List<String> command = jvm(java, classpath, files, BROKER_MAIN);
    command.add(files.serverProperties().toString());
    return command;
  }

  private static List<String> jvm(Path java, String classpath, BrokerFiles files, String main) {
    List<String> command = new ArrayList<>();
    command.add(java.toString());
    command.addAll(
        List.of(
            "-Xms32m",
            "-Xmx" + HEAP,
            // A test broker: start-up time matters, throughput hardly. C1 only roughly halves
            // the CPU of a start; the serial collector suits a small heap and adds no threads.
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            "-Dlog4j2.configurationFile=" + files.log4jProperties(),
            "-cp",
            classpath,
            main));
    return command;
  }

  /** The environment changes for the child: no injected JVM options or jars. */
  static void adjustEnvironment(Map<String, String> environment) {
    SCRUBBED_ENV.forEach(environment::remove);
  }
}
