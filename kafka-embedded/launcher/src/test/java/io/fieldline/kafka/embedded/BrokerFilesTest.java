package io.fieldline.kafka.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerFilesTest {

  @TempDir Path tmp;

  @Test
  void should_listen_on_loopback_only_as_broker_and_controller_when_written() {
    Map<String, String> properties =
        BrokerFiles.serverProperties(9092, 9093, Path.of("/d/data"), Map.of());

    assertThat(properties)
        .containsEntry("process.roles", "broker,controller")
        .containsEntry("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093")
        .containsEntry("controller.quorum.bootstrap.servers", "127.0.0.1:9093")
        .containsEntry("log.dirs", "/d/data")
        .containsEntry("offsets.topic.replication.factor", "1");
  }

  @Test
  void should_let_overrides_win_when_given() {
    Map<String, String> properties =
        BrokerFiles.serverProperties(
            1,
            2,
            Path.of("/d"),
            Map.of("num.io.threads", "4", "auto.create.topics.enable", "false"));

    assertThat(properties)
        .containsEntry("num.io.threads", "4")
        .containsEntry("auto.create.topics.enable", "false");
  }

  @Test
  void should_read_back_the_controller_port_when_the_dir_was_used_before() throws Exception {
    BrokerFiles files = new BrokerFiles(tmp.resolve("kafka"));
    assertThat(files.previousControllerPort()).isEmpty();

    files.write(BrokerFiles.serverProperties(9092, 19093, files.logDir(), Map.of()));

    assertThat(files.previousControllerPort()).hasValue(19093);
    Properties written = new Properties();
    try (Reader in = Files.newBufferedReader(files.serverProperties())) {
      written.load(in);
    }
    assertThat(written.getProperty("log.dirs")).isEqualTo(files.logDir().toString());
    assertThat(files.log4jProperties()).content().contains("rootLogger.level = INFO");
  }

  @Test
  void should_show_only_what_the_current_launch_logged_when_asked_for_the_tail() throws Exception {
    BrokerFiles files = new BrokerFiles(tmp);
    Files.writeString(files.log(), "old run\n");
    long mark = files.logSize();
    Files.writeString(files.log(), "old run\nline 1\nline 2\nline 3\n");

    String tail = files.logTail(mark, 2);

    assertThat(tail).contains("kafka.log").contains("line 2\nline 3").doesNotContain("old run");
    assertThat(tail).doesNotContain("line 1");
  }
}
