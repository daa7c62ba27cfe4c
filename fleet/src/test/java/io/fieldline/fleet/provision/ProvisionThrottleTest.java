package io.fieldline.fleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.fleet.provision.ProvisionThrottle.Admission;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The provisioning rate limits, on a test clock. */
class ProvisionThrottleTest {

  private static final long SECOND = 1_000_000_000L;

  private final AtomicLong now = new AtomicLong(42 * SECOND);
  private final InetAddress a = address(1);
  private final InetAddress b = address(2);

  private static InetAddress address(int last) {
    try {
      return InetAddress.getByAddress(new byte[] {10, 0, 0, (byte) last});
    } catch (java.net.UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  private ProvisionThrottle throttle(
      double perAddressRate, int perAddressBurst, double totalRate, int totalBurst, int failures) {
    return new ProvisionThrottle(
        new ProvisionConfig(
            16384,
            perAddressRate,
            perAddressBurst,
            totalRate,
            totalBurst,
            failures,
            Duration.ofMinutes(1),
            100),
        now::get);
  }

  @Test
  void should_refuse_an_address_when_it_spent_its_burst_and_admit_it_again_after_its_rate() {
    ProvisionThrottle throttle = throttle(1, 3, 1000, 1000, 100);

    for (int i = 0; i < 3; i++) {
      assertThat(throttle.admit(a)).isEqualTo(Admission.ADMITTED);
    }
    assertThat(throttle.admit(a)).isEqualTo(Admission.ADDRESS_RATE);
    assertThat(throttle.admit(b)).isEqualTo(Admission.ADMITTED);

    now.addAndGet(SECOND);
    assertThat(throttle.admit(a)).isEqualTo(Admission.ADMITTED);
    assertThat(throttle.admit(a)).isEqualTo(Admission.ADDRESS_RATE);
  }

  @Test
  void should_refuse_every_address_when_the_node_spent_its_total_burst() {
    ProvisionThrottle throttle = throttle(100, 100, 1, 2, 100);

    assertThat(throttle.admit(a)).isEqualTo(Admission.ADMITTED);
    assertThat(throttle.admit(b)).isEqualTo(Admission.ADMITTED);
    assertThat(throttle.admit(address(3))).isEqualTo(Admission.TOTAL_RATE);

    now.addAndGet(SECOND);
    assertThat(throttle.admit(address(3))).isEqualTo(Admission.ADMITTED);
  }

  @Test
  void should_lock_an_address_out_when_it_had_too_many_failures_until_the_window_ends() {
    ProvisionThrottle throttle = throttle(100, 100, 1000, 1000, 3);

    for (int i = 0; i < 3; i++) {
      assertThat(throttle.admit(a)).isEqualTo(Admission.ADMITTED);
      throttle.failed(a);
    }
    assertThat(throttle.admit(a)).isEqualTo(Admission.LOCKED_OUT);
    assertThat(throttle.admit(b)).isEqualTo(Admission.ADMITTED);

    now.addAndGet(61 * SECOND);
    assertThat(throttle.admit(a)).isEqualTo(Admission.ADMITTED);
  }

  @Test
  void should_take_no_token_when_a_request_is_refused() {
    ProvisionThrottle throttle = throttle(1, 1, 1, 1, 1);
    throttle.failed(a);

    assertThat(throttle.admit(a)).isEqualTo(Admission.LOCKED_OUT);
    // The locked-out request took nothing: the node's single token is still there for b.
    assertThat(throttle.admit(b)).isEqualTo(Admission.ADMITTED);
  }

  @Test
  void should_forget_the_least_recently_seen_address_when_the_table_is_full() {
    ProvisionThrottle throttle = throttle(100, 100, 100_000, 100_000, 1);
    throttle.failed(a);
    for (int i = 10; i < 110; i++) {
      throttle.admit(address(i));
    }

    assertThat(throttle.tracked()).isEqualTo(100);
    assertThat(throttle.admit(a)).isEqualTo(Admission.ADMITTED);
  }
}
