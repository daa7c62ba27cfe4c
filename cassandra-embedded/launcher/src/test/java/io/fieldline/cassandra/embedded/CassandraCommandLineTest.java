package io.fieldline.cassandra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CassandraCommandLineTest {

  private static final String CLASSPATH = "/m2/cassandra-all-5.0.5.jar:/m2/jamm-0.4.0.jar";

  @TempDir Path tmp;

  private EmbeddedCassandraConfig config(Profile profile, String heap) {
    return new EmbeddedCassandraConfig(
        tmp,
        tmp.resolve("cp"),
        Path.of("/jdk17/bin/java"),
        0,
        0,
        profile,
        heap,
        Duration.ofSeconds(9),
        Duration.ZERO,
        Map.of());
  }

  private List<String> command(EmbeddedCassandraConfig config, @Nullable Path setpriv) {
    return CassandraCommandLine.command(
        config, new CassandraConfFiles(tmp), CLASSPATH, setpriv, null);
  }

  @Test
  void should_tune_for_start_up_when_profile_is_test() {
    List<String> command = command(config(Profile.TEST, "1G"), null);

    assertThat(command)
        .startsWith("/jdk17/bin/java")
        .endsWith("-cp", CLASSPATH, CassandraCommandLine.MAIN_CLASS)
        .contains(
            "-Xms512M",
            "-Xmx1G",
            "-XX:TieredStopAtLevel=1",
            "-Dcassandra.skip_sync=true",
            "-Dcassandra.memtable.row_overhead_size=180",
            "-Dcassandra.skip_wait_for_gossip_to_settle=0",
            "-Dcassandra-foreground=true",
            "-Djava.net.preferIPv4Stack=true",
            "-Dcassandra.config=" + tmp.resolve("conf/cassandra.yaml").toUri(),
            "-Dcassandra.storagedir=" + tmp.resolve("data"),
            "-Dcassandra.logdir=" + tmp.resolve("logs"))
        .containsSubsequence(CassandraCommandLine.JDK17_MODULE_FLAGS)
        .doesNotContain("-Dcassandra.unsafesystem=true")
        .noneMatch(flag -> flag.startsWith("-javaagent"));
  }

  @Test
  void should_start_with_the_whole_heap_when_test_heap_is_below_512m() {
    assertThat(command(config(Profile.TEST, "384M"), null)).contains("-Xms384M", "-Xmx384M");
  }

  @Test
  void should_tune_for_throughput_when_profile_is_server() {
    List<String> command = command(config(Profile.SERVER, "2G"), null);

    assertThat(command)
        .contains("-Xms2G", "-Xmx2G", "-javaagent:/m2/jamm-0.4.0.jar")
        .doesNotContain("-XX:TieredStopAtLevel=1", "-Dcassandra.skip_sync=true");
  }

  @Test
  void should_drop_ipc_lock_capability_when_setpriv_is_given() {
    List<String> command = command(config(Profile.TEST, "1G"), Path.of("/usr/bin/setpriv"));

    assertThat(command)
        .startsWith("/usr/bin/setpriv", "--bounding-set=-ipc_lock", "--", "/jdk17/bin/java");
  }

  @Test
  void should_exec_java_through_the_slack_shell_when_a_timer_slack_is_set() {
    EmbeddedCassandraConfig config =
        config(Profile.SERVER, "1G").withTimerSlack(Duration.ofMillis(1));

    List<String> command =
        CassandraCommandLine.command(
            config,
            new CassandraConfFiles(tmp),
            CLASSPATH,
            Path.of("/usr/bin/setpriv"),
            Path.of("/bin/sh"));

    assertThat(command)
        .containsSubsequence("/usr/bin/setpriv", "--", "/bin/sh", "-c")
        .containsSubsequence("fieldline-cassandra", "1000000", "/jdk17/bin/java")
        .endsWith(CassandraCommandLine.MAIN_CLASS);
  }

  @Test
  void should_start_java_directly_when_the_timer_slack_is_zero() {
    List<String> command =
        CassandraCommandLine.command(
            config(Profile.SERVER, "1G"),
            new CassandraConfFiles(tmp),
            CLASSPATH,
            null,
            Path.of("/bin/sh"));

    assertThat(command).startsWith("/jdk17/bin/java").doesNotContain("/bin/sh");
  }

  @Test
  void should_cap_malloc_arenas_and_drop_injected_options_when_adjusting_environment() {
    Map<String, String> env =
        new HashMap<>(Map.of("JAVA_TOOL_OPTIONS", "-javaagent:x", "CLASSPATH", "/x", "HOME", "/r"));

    CassandraCommandLine.adjustEnvironment(env);

    assertThat(env).containsOnly(Map.entry("HOME", "/r"), Map.entry("MALLOC_ARENA_MAX", "4"));
  }

  @Test
  void should_fail_with_rebuild_hint_when_classpath_names_missing_jars() throws IOException {
    Path jar = Files.createFile(tmp.resolve("present.jar"));
    Path file = Files.writeString(tmp.resolve("cassandra.classpath"), jar + ":/gone/x.jar\n");

    assertThatThrownBy(() -> CassandraCommandLine.readClasspath(file))
        .isInstanceOf(EmbeddedCassandraException.class)
        .hasMessageContainingAll("/gone/x.jar", "rebuild cassandra-embedded/runtime");
  }

  @Test
  void should_fail_with_build_hint_when_classpath_file_is_missing() {
    assertThatThrownBy(() -> CassandraCommandLine.readClasspath(tmp.resolve("nope")))
        .isInstanceOf(EmbeddedCassandraException.class)
        .hasMessageContaining("build cassandra-embedded/runtime first");
  }

  @Test
  void should_read_trimmed_classpath_when_all_jars_exist() throws IOException {
    Path a = Files.createFile(tmp.resolve("a.jar"));
    Path b = Files.createFile(tmp.resolve("b.jar"));
    Path file = Files.writeString(tmp.resolve("cassandra.classpath"), a + ":" + b + "\n");

    assertThat(CassandraCommandLine.readClasspath(file)).isEqualTo(a + ":" + b);
  }
}
