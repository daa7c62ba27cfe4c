package io.fieldline.cassandra.embedded;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Finds the defaults of {@link EmbeddedCassandraConfig#defaults}: the runtime module's classpath
 * file and a {@code java} that can run Cassandra 5.0. The lookups are pure functions of their
 * arguments so that tests can feed them any JVM version, environment and file system.
 */
final class DefaultLocations {

  static final Path RUNTIME_CLASSPATH_FILE =
      Path.of("cassandra-embedded", "runtime", "target", "cassandra.classpath");

  static final Path DEBIAN_JDK17_JAVA = Path.of("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");

  /** Cassandra 5.0 supports JDK 11 and 17; JDK 24+ removed the security manager it installs. */
  static final int MIN_JAVA_FEATURE = 11;

  static final int MAX_JAVA_FEATURE = 17;

  private DefaultLocations() {}

  static Path classpathFile() {
    return classpathFile(
        System.getProperty(EmbeddedCassandraConfig.CLASSPATH_FILE_PROPERTY),
        Path.of(System.getProperty("user.dir")),
        Files::isRegularFile);
  }

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
    throw new EmbeddedCassandraException(
        "No Cassandra classpath file: set -D"
            + EmbeddedCassandraConfig.CLASSPATH_FILE_PROPERTY
            + "=<file>, or build the runtime module first"
            + " (mvn -pl cassandra-embedded/runtime install) so that "
            + RUNTIME_CLASSPATH_FILE
            + " exists in "
            + startDir.toAbsolutePath()
            + " or one of its parents");
  }

  static Path javaExecutable() {
    return javaExecutable(
        Runtime.version().feature(),
        Path.of(System.getProperty("java.home")),
        System.getenv(),
        Files::isExecutable);
  }

  static Path javaExecutable(
      int currentFeature, Path currentJavaHome, Map<String, String> env, Predicate<Path> exists) {
    if (currentFeature >= MIN_JAVA_FEATURE && currentFeature <= MAX_JAVA_FEATURE) {
      return currentJavaHome.resolve("bin").resolve("java");
    }
    String fromEnv = env.get(EmbeddedCassandraConfig.JAVA_ENV);
    if (fromEnv != null && !fromEnv.isBlank()) {
      Path path = Path.of(fromEnv);
      // Accept a JDK home as well as its bin/java.
      Path inHome = path.resolve("bin").resolve("java");
      if (exists.test(inHome)) {
        return inHome;
      }
      if (exists.test(path)) {
        return path;
      }
      throw new EmbeddedCassandraException(
          "$" + EmbeddedCassandraConfig.JAVA_ENV + " is " + fromEnv + ", which is no java");
    }
    if (exists.test(DEBIAN_JDK17_JAVA)) {
      return DEBIAN_JDK17_JAVA;
    }
    throw new EmbeddedCassandraException(
        "Cassandra 5.0 needs JDK 11..17 but this JVM is "
            + currentFeature
            + "; point $"
            + EmbeddedCassandraConfig.JAVA_ENV
            + " at a JDK 17 java (or its home), or install one at "
            + DEBIAN_JDK17_JAVA);
  }
}
