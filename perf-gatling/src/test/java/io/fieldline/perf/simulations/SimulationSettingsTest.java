package io.fieldline.perf.simulations;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

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
}
