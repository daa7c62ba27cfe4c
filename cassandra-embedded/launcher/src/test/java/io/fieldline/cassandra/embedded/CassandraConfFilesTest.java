package io.fieldline.cassandra.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig.Profile;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CassandraConfFilesTest {

  private static final CassandraPorts PORTS = new CassandraPorts(19042, 17000, 17001);

  @TempDir Path tmp;

  private EmbeddedCassandraConfig config(Profile profile) {
    return new EmbeddedCassandraConfig(
        tmp,
        tmp.resolve("cp"),
        Path.of("java"),
        0,
        0,
        profile,
        "1G",
        Duration.ofSeconds(9),
        Duration.ZERO,
        Map.of());
  }

  @Test
  void should_write_ports_seed_and_absolute_directories_when_generating_yaml() {
    CassandraConfFiles files = new CassandraConfFiles(tmp);

    String yaml = files.yamlText(config(Profile.TEST), PORTS);

    assertThat(yaml)
        .contains("native_transport_port: 19042\n")
        .contains("storage_port: 17000\n")
        .contains("ssl_storage_port: 17001\n")
        .contains("- seeds: \"127.0.0.1:17000\"\n")
        .contains("listen_address: 127.0.0.1\n")
        .contains("rpc_address: 127.0.0.1\n")
        .contains("endpoint_snitch: SimpleSnitch\n")
        .contains("auto_snapshot: false\n")
        .contains("commitlog_sync: periodic\n")
        .contains("data_file_directories:\n  - \"" + tmp.resolve("data/data") + "\"\n")
        .contains("commitlog_directory: \"" + tmp.resolve("data/commitlog") + "\"\n")
        .doesNotContain("memtable_allocation_type");
  }

  @Test
  void should_use_offheap_memtables_when_profile_is_server() {
    String yaml = new CassandraConfFiles(tmp).yamlText(config(Profile.SERVER), PORTS);

    assertThat(yaml).contains("memtable_allocation_type: offheap_objects\n");
  }

  @Test
  void should_replace_generated_key_in_place_when_extra_yaml_overrides_it() {
    EmbeddedCassandraConfig config =
        config(Profile.SERVER)
            .withExtraYaml("memtable_allocation_type", "heap_buffers")
            .withExtraYaml("write_request_timeout", "5000ms");

    String yaml = new CassandraConfFiles(tmp).yamlText(config, PORTS);

    assertThat(yaml)
        .contains("memtable_allocation_type: heap_buffers\n")
        .doesNotContain("offheap_objects")
        .endsWith("write_request_timeout: 5000ms\n");
  }

  @Test
  void should_log_to_a_file_under_logs_when_generating_logback() {
    CassandraConfFiles files = new CassandraConfFiles(tmp);

    assertThat(files.logbackText())
        .contains("<file>" + tmp.resolve("logs/system.log") + "</file>")
        .contains("%-5level")
        .doesNotContain("ConsoleAppender");
  }

  @Test
  void should_create_conf_data_and_log_directories_when_written() throws IOException {
    CassandraConfFiles files = new CassandraConfFiles(tmp.resolve("node"));

    files.write(config(Profile.TEST).withWorkDir(tmp.resolve("node")), PORTS);

    assertThat(files.yaml()).isRegularFile();
    assertThat(files.logback()).isRegularFile();
    assertThat(files.triggersDir()).isDirectory();
    assertThat(files.dataDir()).isDirectory();
    assertThat(files.logDir()).isDirectory();
  }
}
