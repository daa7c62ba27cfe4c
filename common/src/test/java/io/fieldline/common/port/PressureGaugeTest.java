package io.fieldline.common.port;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PressureGaugeTest {

  @Test
  void should_signal_overload_at_high_water_and_relief_at_low_water_only() {
    PressureGauge gauge = new PressureGauge("test", 4, 1);
    List<Boolean> transitions = new ArrayList<>();
    gauge.subscribe(transitions::add);
    for (int i = 0; i < 3; i++) {
      gauge.increment();
    }
    assertThat(transitions).isEmpty();
    gauge.increment();
    assertThat(transitions).containsExactly(true);
    gauge.increment();
    gauge.decrement();
    gauge.decrement();
    gauge.decrement();
    assertThat(gauge.isOverloaded()).as("hysteresis: still above low water").isTrue();
    gauge.decrement();
    assertThat(transitions).containsExactly(true, false);
    assertThat(gauge.level()).isEqualTo(1);
  }

  @Test
  void should_reject_watermarks_when_low_is_not_below_high() {
    assertThatThrownBy(() -> new PressureGauge("bad", 2, 2))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
