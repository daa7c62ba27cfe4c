package io.fieldline.transport.mqtt.session;

import static io.fieldline.transport.mqtt.testkit.SessionClient.telemetry;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import org.junit.jupiter.api.Test;

/**
 * The outbound bound: a client whose answers pile up (the channel turns unwritable at {@code
 * outbound-high-water}) is not read until they drain, and is closed if they do not drain within
 * {@code outbound-stall-timeout}. The channel's writability is driven directly, as the outbound
 * buffer would drive it.
 */
class SessionOutboundTest extends SessionHandlerTestBase {

  private static final int STALL_MILLIS = 5_000;

  private SessionFixture fixture() {
    return fixture("outbound-stall-timeout = " + STALL_MILLIS + " ms");
  }

  private static void writable(SessionClient client, boolean writable) {
    client.channel.unsafe().outboundBuffer().setUserDefinedWritability(1, writable);
    client.runTasks(); // the buffer announces the change as a task of the event loop
  }

  @Test
  void should_stop_reading_while_answers_pile_up_and_resume_once_they_drain() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);

    writable(client, false);
    assertThat(client.isReading()).isFalse();
    assertThat(fixture.count("fieldline.mqtt.backpressure.pauses", "cause", "outbound"))
        .isEqualTo(1);

    writable(client, true);
    assertThat(client.isReading()).isTrue();
    client.advanceTime(2 * STALL_MILLIS);
    assertThat(client.isOpen()).isTrue();
    assertThat(fixture.rejected("slow_reader")).isZero();
  }

  @Test
  void should_close_a_client_whose_answers_do_not_drain_within_the_stall_timeout() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);

    writable(client, false);
    client.advanceTime(STALL_MILLIS - 1);
    assertThat(client.isOpen()).isTrue();
    client.advanceTime(1);

    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.rejected("slow_reader")).isEqualTo(1);
  }

  @Test
  void should_restart_the_stall_timeout_each_time_answers_pile_up_again() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);

    writable(client, false);
    client.advanceTime(STALL_MILLIS - 1_000);
    writable(client, true);
    writable(client, false);
    client.advanceTime(STALL_MILLIS - 1_000);

    assertThat(client.isOpen()).isTrue();
    client.advanceTime(1_000);
    assertThat(client.isOpen()).isFalse();
  }

  @Test
  void should_keep_reading_paused_while_another_cause_still_holds() {
    SessionFixture fixture = fixture("max-inflight = 1", "inflight-low-water = 0");
    SessionClient client = connected(fixture);
    client.send(telemetry(1));
    assertThat(client.isReading()).isFalse();

    writable(client, false);
    writable(client, true);
    assertThat(client.isReading()).as("the window is still full").isFalse();

    fixture.gateway.submission(0).store();
    assertThat(client.received()).containsExactly("PUBACK 1");
    assertThat(client.isReading()).isTrue();
  }

  @Test
  void should_not_count_keep_alive_silence_while_the_server_is_not_reading() {
    SessionFixture fixture = fixture("outbound-stall-timeout = 1 hour");
    SessionClient client = connected(fixture);

    writable(client, false);
    client.advanceTime(600_000);

    assertThat(client.isOpen()).isTrue();
  }
}
