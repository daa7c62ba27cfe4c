package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FailedAuthBudgetsTest {

  // Negative on purpose: System.nanoTime() has no fixed origin.
  private final AtomicLong now = new AtomicLong(-3_000_000_000_000_000_000L);
  private final InetAddress one = address("192.0.2.1");
  private final InetAddress two = address("192.0.2.2");

  private static InetAddress address(String literal) {
    try {
      return InetAddress.getByName(literal);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  private FailedAuthBudgets budgets(int burst, int maxAddresses) {
    return new FailedAuthBudgets(burst, Duration.ofSeconds(1), maxAddresses, now::get);
  }

  @Test
  void should_refuse_an_address_until_it_regains_one_when_its_failures_are_spent() {
    FailedAuthBudgets budgets = budgets(3, 100);

    for (int i = 0; i < 3; i++) {
      assertThat(budgets.wait(one)).isZero();
      budgets.failed(one);
    }

    assertThat(budgets.wait(one)).isEqualTo(Duration.ofSeconds(1));
    assertThat(budgets.wait(two)).isZero();
    now.addAndGet(Duration.ofMillis(400).toNanos());
    assertThat(budgets.wait(one)).isEqualTo(Duration.ofMillis(600));
    now.addAndGet(Duration.ofMillis(600).toNanos());
    assertThat(budgets.wait(one)).isZero();
    budgets.failed(one);
    assertThat(budgets.wait(one)).isPositive();
  }

  @Test
  void should_forget_an_address_when_its_budget_refilled_and_when_the_table_is_full() {
    FailedAuthBudgets budgets = budgets(2, 2);

    budgets.failed(one);
    budgets.failed(two);
    budgets.failed(address("192.0.2.3"));

    assertThat(budgets.tracked()).isEqualTo(2);
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    budgets.sweep();
    assertThat(budgets.tracked()).isZero();
  }

  @Test
  void should_limit_nothing_when_the_burst_is_zero() {
    FailedAuthBudgets budgets = budgets(0, 100);

    for (int i = 0; i < 100; i++) {
      budgets.failed(one);
    }

    assertThat(budgets.wait(one)).isZero();
    assertThat(budgets.tracked()).isZero();
  }
}
