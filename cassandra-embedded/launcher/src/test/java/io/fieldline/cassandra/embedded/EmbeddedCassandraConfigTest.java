package io.fieldline.cassandra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EmbeddedCassandraConfigTest {

  @TempDir Path tmp;

  private EmbeddedCassandraConfig valid() {
    return new EmbeddedCassandraConfig(
        tmp.resolve("node"),
        tmp.resolve("cassandra.classpath"),
        Path.of("/usr/bin/java"),
        0,
        0,
        Profile.TEST,
        "1G",
        Duration.ofSeconds(120),
        EmbeddedCassandraConfig.DEFAULT_TIMER_SLACK,
        Map.of());
  }

  @Test
  void should_find_runtime_classpath_and_jdk17_when_defaults_are_used() {
    EmbeddedCassandraConfig config = EmbeddedCassandraConfig.defaults(tmp, Profile.TEST);

    assertThat(config.classpathFile())
        .isRegularFile()
        .endsWith(Path.of("cassandra-embedded", "runtime", "target", "cassandra.classpath"));
    assertThat(config.javaExecutable()).isExecutable();
    assertThat(config.workDir()).isEqualTo(tmp);
    assertThat(config.cqlPort()).isZero();
    assertThat(config.storagePort()).isZero();
    assertThat(config.profile()).isEqualTo(Profile.TEST);
    assertThat(config.heap()).isEqualTo("1G");
    assertThat(config.startTimeout()).isEqualTo(Duration.ofSeconds(120));
    assertThat(config.extraYaml()).isEmpty();
  }

  @Test
  void should_make_work_dir_absolute_when_given_relative() {
    EmbeddedCassandraConfig config = valid().withWorkDir(Path.of("relative", "..", "node"));

    assertThat(config.workDir()).isAbsolute().isEqualTo(Path.of("node").toAbsolutePath());
  }

  @ParameterizedTest
  @ValueSource(strings = {"lots", "1.5G", "0", "-1G", "1GB", "", " 1G", "99999999999G"})
  void should_reject_heap_when_not_a_jvm_size(String heap) {
    assertThatThrownBy(() -> valid().withHeap(heap))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("heap must be a JVM size");
  }

  @Test
  void should_reject_heap_when_below_256m() {
    assertThatThrownBy(() -> valid().withHeap("128M"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("heap must be at least 256M");
  }

  @Test
  void should_accept_heap_sizes_when_in_jvm_syntax() {
    assertThat(valid().withHeap("256M").heapBytes()).isEqualTo(256L << 20);
    assertThat(valid().withHeap("768m").heapBytes()).isEqualTo(768L << 20);
    assertThat(valid().withHeap("2G").heapBytes()).isEqualTo(2L << 30);
    assertThat(valid().withHeap("1048576k").heapBytes()).isEqualTo(1L << 30);
    assertThat(valid().withHeap("536870912").heapBytes()).isEqualTo(512L << 20);
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 65536, Integer.MAX_VALUE, Integer.MIN_VALUE})
  void should_reject_port_when_out_of_range(int port) {
    assertThatThrownBy(() -> valid().withCqlPort(port))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cqlPort must be 0 (pick a free port) or 1..65535");
    assertThatThrownBy(() -> valid().withStoragePort(port))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("storagePort must be 0 (pick a free port) or 1..65535");
  }

  @Test
  void should_reject_ports_when_cql_and_storage_are_the_same() {
    assertThatThrownBy(() -> valid().withCqlPort(9042).withStoragePort(9042))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cqlPort and storagePort must differ");
  }

  @Test
  void should_reject_start_timeout_when_not_positive() {
    assertThatThrownBy(() -> valid().withStartTimeout(Duration.ZERO))
        .hasMessageContaining("startTimeout must be positive");
    assertThatThrownBy(() -> valid().withStartTimeout(Duration.ofSeconds(-1)))
        .hasMessageContaining("startTimeout must be positive");
  }

  @Test
  void should_reject_timer_slack_when_negative_or_above_100ms() {
    assertThatThrownBy(() -> valid().withTimerSlack(Duration.ofNanos(-1)))
        .hasMessageContaining("timerSlack must be between 0 and");
    assertThatThrownBy(() -> valid().withTimerSlack(Duration.ofMillis(101)))
        .hasMessageContaining("timerSlack must be between 0 and");
    assertThat(valid().withTimerSlack(Duration.ZERO).timerSlack()).isZero();
  }

  @Test
  void should_reject_extra_yaml_when_it_sets_a_managed_port() {
    for (String key : EmbeddedCassandraConfig.MANAGED_YAML_KEYS) {
      assertThatThrownBy(() -> valid().withExtraYaml(key, "9999"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("extraYaml must not set " + key);
    }
  }

  @Test
  void should_reject_extra_yaml_when_key_is_not_a_top_level_key_or_value_is_blank() {
    assertThatThrownBy(() -> valid().withExtraYaml("seed_provider.seeds", "x"))
        .hasMessageContaining("plain top-level yaml key");
    assertThatThrownBy(() -> valid().withExtraYaml("key: x\nother", "x"))
        .hasMessageContaining("plain top-level yaml key");
    assertThatThrownBy(() -> valid().withExtraYaml("write_request_timeout", " "))
        .hasMessageContaining("must not be blank");
  }

  @Test
  void should_list_every_error_when_several_fields_are_invalid() {
    assertThatThrownBy(
            () ->
                new EmbeddedCassandraConfig(
                    tmp,
                    tmp,
                    tmp,
                    -5,
                    70000,
                    Profile.SERVER,
                    "big",
                    Duration.ZERO,
                    Duration.ofSeconds(1),
                    Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll("cqlPort", "storagePort", "heap", "startTimeout", "timerSlack");
  }

  @Test
  void should_replace_one_field_when_a_with_copy_is_made() {
    EmbeddedCassandraConfig base = valid();

    assertThat(base.withWorkDir(tmp.resolve("other")).workDir()).isEqualTo(tmp.resolve("other"));
    assertThat(base.withClasspathFile(tmp.resolve("cp")).classpathFile())
        .isEqualTo(tmp.resolve("cp"));
    assertThat(base.withJavaExecutable(Path.of("/j/bin/java")).javaExecutable())
        .isEqualTo(Path.of("/j/bin/java"));
    assertThat(base.withCqlPort(19042).cqlPort()).isEqualTo(19042);
    assertThat(base.withStoragePort(17000).storagePort()).isEqualTo(17000);
    assertThat(base.withProfile(Profile.SERVER).profile()).isEqualTo(Profile.SERVER);
    assertThat(base.withHeap("2G").heap()).isEqualTo("2G");
    assertThat(base.withStartTimeout(Duration.ofSeconds(5)).startTimeout())
        .isEqualTo(Duration.ofSeconds(5));
    assertThat(base.withTimerSlack(Duration.ofMillis(2)).timerSlack())
        .isEqualTo(Duration.ofMillis(2));
    assertThat(base.withExtraYaml(Map.of("a", "1")).extraYaml())
        .containsExactly(Map.entry("a", "1"));
    assertThat(base.withExtraYaml("a", "1").withExtraYaml("b", "2").extraYaml())
        .containsExactly(Map.entry("a", "1"), Map.entry("b", "2"));
    assertThat(base.withCqlPort(19042).withCqlPort(0)).isEqualTo(base);
  }

  @Test
  void should_keep_extra_yaml_unchanged_when_the_callers_map_changes() {
    Map<String, String> extra = new HashMap<>(Map.of("a", "1"));
    EmbeddedCassandraConfig config = valid().withExtraYaml(extra);

    extra.put("b", "2");

    assertThat(config.extraYaml()).containsOnlyKeys("a");
    assertThatThrownBy(() -> config.extraYaml().put("c", "3"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void should_use_current_jvm_when_its_version_is_11_to_17() {
    Path home = Path.of("/opt/jdk17");

    assertThat(DefaultLocations.javaExecutable(17, home, Map.of(), path -> true))
        .isEqualTo(home.resolve("bin/java"));
    assertThat(DefaultLocations.javaExecutable(11, home, Map.of(), path -> true))
        .isEqualTo(home.resolve("bin/java"));
  }

  @Test
  void should_use_environment_java_when_current_jvm_is_too_new() {
    Path home = Path.of("/opt/jdk25");
    Map<String, String> env = Map.of(EmbeddedCassandraConfig.JAVA_ENV, "/opt/jdk17/bin/java");

    assertThat(
            DefaultLocations.javaExecutable(
                25, home, env, path -> path.equals(Path.of("/opt/jdk17/bin/java"))))
        .isEqualTo(Path.of("/opt/jdk17/bin/java"));
  }

  @Test
  void should_accept_jdk_home_when_environment_names_a_directory() {
    Map<String, String> env = Map.of(EmbeddedCassandraConfig.JAVA_ENV, "/opt/jdk17");

    assertThat(
            DefaultLocations.javaExecutable(
                25,
                Path.of("/opt/jdk25"),
                env,
                path -> path.equals(Path.of("/opt/jdk17/bin/java"))))
        .isEqualTo(Path.of("/opt/jdk17/bin/java"));
  }

  @Test
  void should_fail_when_environment_java_does_not_exist() {
    Map<String, String> env = Map.of(EmbeddedCassandraConfig.JAVA_ENV, "/nowhere");

    assertThatThrownBy(
            () -> DefaultLocations.javaExecutable(25, Path.of("/opt/jdk25"), env, path -> false))
        .isInstanceOf(EmbeddedCassandraException.class)
        .hasMessageContaining("/nowhere");
  }

  @Test
  void should_fall_back_to_debian_jdk17_when_jvm_is_too_new_and_environment_is_unset() {
    assertThat(
            DefaultLocations.javaExecutable(
                25, Path.of("/opt/jdk25"), Map.of(), DefaultLocations.DEBIAN_JDK17_JAVA::equals))
        .isEqualTo(DefaultLocations.DEBIAN_JDK17_JAVA);
  }

  @Test
  void should_explain_what_to_do_when_no_jdk17_is_found() {
    assertThatThrownBy(
            () -> DefaultLocations.javaExecutable(25, Path.of("/opt/jdk25"), Map.of(), p -> false))
        .isInstanceOf(EmbeddedCassandraException.class)
        .hasMessageContainingAll("JDK 11..17", "is 25", EmbeddedCassandraConfig.JAVA_ENV);
  }

  @Test
  void should_prefer_system_property_when_locating_classpath_file() {
    assertThat(DefaultLocations.classpathFile("/x/cassandra.classpath", tmp, path -> true))
        .isEqualTo(Path.of("/x/cassandra.classpath"));
  }

  @Test
  void should_walk_up_to_runtime_module_when_started_in_a_nested_directory() throws IOException {
    Path file = tmp.resolve(DefaultLocations.RUNTIME_CLASSPATH_FILE);
    Files.createDirectories(file.getParent());
    Files.writeString(file, "/a.jar");
    Path nested = Files.createDirectories(tmp.resolve("server/src/test"));

    assertThat(DefaultLocations.classpathFile(null, nested, Files::isRegularFile)).isEqualTo(file);
  }

  @Test
  void should_fail_with_build_hint_when_no_classpath_file_is_found() {
    assertThatThrownBy(() -> DefaultLocations.classpathFile(null, tmp, path -> false))
        .isInstanceOf(EmbeddedCassandraException.class)
        .hasMessageContainingAll(
            EmbeddedCassandraConfig.CLASSPATH_FILE_PROPERTY, "cassandra-embedded/runtime");
  }
}
