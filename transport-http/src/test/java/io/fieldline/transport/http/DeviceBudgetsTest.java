package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.transport.http.DeviceBudgets.Rated;
import java.net.InetAddress;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DeviceBudgetsTest {

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final DeviceId device = new DeviceId(UUID.randomUUID());
  private final DeviceId other = new DeviceId(UUID.randomUUID());

  private DeviceBudgets budgets(String hocon) {
    DeviceApiConfig config =
        DeviceApiConfig.from(
            ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve());
    return new DeviceBudgets(config, now::get);
  }

  @Test
  void should_refuse_an_upload_when_the_device_has_max_inflight_being_stored() {
    DeviceBudgets budgets =
        budgets("fieldline.mqtt.max-inflight = 2\nfieldline.mqtt.inflight-low-water = 1");

    assertThat(budgets.startWrite(device)).isTrue();
    assertThat(budgets.startWrite(device)).isTrue();
    assertThat(budgets.startWrite(device)).isFalse();
    assertThat(budgets.startWrite(other)).isTrue();
    budgets.writeDone(device);
    assertThat(budgets.startWrite(device)).isTrue();
  }

  @Test
  void should_refuse_a_poll_when_the_device_or_the_node_has_as_many_as_it_may() {
    DeviceBudgets budgets =
        budgets(
            "fieldline.http-device.max-polls-per-device = 2\nfieldline.http-device.max-polls = 3");

    assertThat(budgets.startPoll(device)).isNull();
    assertThat(budgets.startPoll(device)).isNull();
    assertThat(budgets.startPoll(device)).contains("of this device");
    assertThat(budgets.startPoll(other)).isNull();
    assertThat(budgets.startPoll(new DeviceId(UUID.randomUUID()))).contains("on this node");
    assertThat(budgets.polls()).isEqualTo(3);
    budgets.pollDone(device);
    assertThat(budgets.polls()).isEqualTo(2);
    assertThat(budgets.startPoll(device)).isNull();
  }

  @Test
  void should_refuse_a_poll_when_its_source_address_has_as_many_as_it_may() throws Exception {
    DeviceBudgets budgets =
        budgets(
            "fieldline.http-device.max-polls-per-address = 2\n"
                + "fieldline.http-device.max-polls = 10");
    InetAddress one = InetAddress.getByName("192.0.2.1");
    InetAddress two = InetAddress.getByName("192.0.2.2");

    assertThat(budgets.startPoll(new DeviceId(UUID.randomUUID()), one)).isNull();
    assertThat(budgets.startPoll(device, one)).isNull();
    assertThat(budgets.startPoll(other, one)).contains("from this address");
    assertThat(budgets.startPoll(other, two)).isNull();
    assertThat(budgets.polls()).isEqualTo(3);
    budgets.pollDone(device, one);
    assertThat(budgets.polls()).isEqualTo(2);
    assertThat(budgets.startPoll(device, one)).isNull();
    assertThat(budgets.startPoll(other, one)).contains("from this address");
    assertThat(budgets.polls()).isEqualTo(3);
  }

  @Test
  void should_admit_the_burst_then_one_per_interval_when_a_device_sends_client_rpc() {
    DeviceBudgets budgets =
        budgets("fieldline.mqtt.client-rpc-rate = 10\nfieldline.mqtt.client-rpc-burst = 3");

    for (int i = 0; i < 3; i++) {
      assertThat(budgets.admit(device, Rated.CLIENT_RPC)).isZero();
    }
    Duration wait = budgets.admit(device, Rated.CLIENT_RPC);
    assertThat(wait).isEqualTo(Duration.ofMillis(100));
    assertThat(budgets.admit(other, Rated.CLIENT_RPC)).isZero();
    assertThat(budgets.admit(device, Rated.ATTRIBUTE_READ)).isZero();
    now.addAndGet(wait.toNanos());
    assertThat(budgets.admit(device, Rated.CLIENT_RPC)).isZero();
    assertThat(budgets.admit(device, Rated.CLIENT_RPC)).isPositive();
  }

  @Test
  void should_forget_a_device_when_it_uses_nothing_and_its_rate_budget_refilled() {
    DeviceBudgets budgets = budgets("fieldline.mqtt.attribute-request-rate = 1");

    assertThat(budgets.startWrite(device)).isTrue();
    budgets.admit(other, Rated.ATTRIBUTE_READ);
    assertThat(budgets.tracked()).isEqualTo(2);
    budgets.writeDone(device);
    assertThat(budgets.tracked()).isEqualTo(1);
    budgets.sweep();
    assertThat(budgets.tracked()).isEqualTo(1);
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    budgets.sweep();
    assertThat(budgets.tracked()).isZero();
  }

  @Test
  void should_not_limit_the_rate_when_it_is_zero() {
    DeviceBudgets budgets = budgets("fieldline.mqtt.client-rpc-rate = 0");

    for (int i = 0; i < 1000; i++) {
      assertThat(budgets.admit(device, Rated.CLIENT_RPC)).isZero();
    }
    assertThat(budgets.tracked()).isZero();
  }

  @Test
  void should_admit_and_forget_as_usual_when_the_nano_clock_is_negative() {
    // System.nanoTime() may be any value, negative included: budgets count from now, not from 0.
    now.set(-4_000_000_000_000_000_000L);
    DeviceBudgets budgets =
        budgets("fieldline.mqtt.client-rpc-rate = 10\nfieldline.mqtt.client-rpc-burst = 3");

    assertThat(budgets.startWrite(device)).isTrue();
    budgets.writeDone(device);
    assertThat(budgets.tracked()).isZero();
    for (int i = 0; i < 3; i++) {
      assertThat(budgets.admit(device, Rated.CLIENT_RPC)).isZero();
    }
    assertThat(budgets.admit(device, Rated.CLIENT_RPC)).isEqualTo(Duration.ofMillis(100));
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    budgets.sweep();
    assertThat(budgets.tracked()).isZero();
  }
}
