package io.fieldline.kafka.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EmbeddedKafkaMainTest {

  @Test
  void should_use_the_defaults_when_given_no_arguments() {
    EmbeddedKafkaMain.Arguments arguments = EmbeddedKafkaMain.parse(new String[0]);

    assertThat(arguments.dataDir()).isEqualTo(Path.of("data/kafka"));
    assertThat(arguments.port()).isEqualTo(9092);
    assertThat(arguments.properties()).isEmpty();
  }

  @Test
  void should_take_dir_port_and_properties_when_given() {
    EmbeddedKafkaMain.Arguments arguments =
        EmbeddedKafkaMain.parse(
            new String[] {
              "--data-dir", "/tmp/k", "--port", "0", "--property", "auto.create.topics.enable=false"
            });

    assertThat(arguments.dataDir()).isEqualTo(Path.of("/tmp/k"));
    assertThat(arguments.port()).isZero();
    assertThat(arguments.properties()).isEqualTo(Map.of("auto.create.topics.enable", "false"));
  }

  @Test
  void should_refuse_bad_arguments_when_parsing() {
    assertThatThrownBy(() -> EmbeddedKafkaMain.parse(new String[] {"--port", "x"}))
        .hasMessageContaining("--port must be a number");
    assertThatThrownBy(() -> EmbeddedKafkaMain.parse(new String[] {"--port"}))
        .hasMessageContaining("--port needs a value");
    assertThatThrownBy(() -> EmbeddedKafkaMain.parse(new String[] {"--property", "novalue"}))
        .hasMessageContaining("KEY=VALUE");
    assertThatThrownBy(() -> EmbeddedKafkaMain.parse(new String[] {"--verbose", "1"}))
        .hasMessageContaining("unknown argument --verbose");
  }
}
