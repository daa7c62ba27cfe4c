package io.fieldline.perf.simulations;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulationSettingsTest {

  @Test
  void should_parse_a_comma_separated_port_list_in_order() {
    List<String> errors = new ArrayList<>();

    List<Integer> ports = SimulationSettings.parsePorts("1883, 1884,21000", errors);

    assertThat(errors).isEmpty();
    assertThat(ports).containsExactly(1883, 1884, 21000);
  }

  @Test
  void should_report_every_bad_entry_of_a_port_list() {
    List<String> errors = new ArrayList<>();

    List<Integer> ports = SimulationSettings.parsePorts("1883,,x,0,65536", errors);

    assertThat(ports).containsExactly(1883);
    assertThat(errors).hasSize(4);
    assertThat(errors.get(1)).contains("'x'");
    assertThat(errors.get(2)).contains("0 is outside 1..65535");
  }

  @Test
  void should_wake_when_the_feeder_is_renamed_into_place(@TempDir Path dir) throws IOException {
    Path feeder = dir.resolve("devices.csv");
    CompletableFuture<Boolean> waiting =
        CompletableFuture.supplyAsync(
            () -> SimulationSettings.awaitFile(feeder, Duration.ofSeconds(30)));
    Path part = Files.writeString(dir.resolve("devices.csv.part"), "name,id,token\n");

    Files.move(part, feeder, StandardCopyOption.ATOMIC_MOVE);

    assertThat(waiting.join()).isTrue();
  }

  @Test
  void should_give_up_waiting_for_a_feeder_that_never_comes(@TempDir Path dir) {
    assertThat(SimulationSettings.awaitFile(dir.resolve("devices.csv"), Duration.ofMillis(300)))
        .isFalse();
  }
}
