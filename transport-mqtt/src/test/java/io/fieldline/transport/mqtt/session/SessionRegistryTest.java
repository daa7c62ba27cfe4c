package io.fieldline.transport.mqtt.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.port.SessionCloser;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SessionRegistryTest {

  /** A connection that counts how often it was taken over. */
  private static final class CountingConnection implements SessionRegistry.Member {
    final AtomicInteger takeOvers = new AtomicInteger();

    @Override
    public void takeOver() {
      takeOvers.incrementAndGet();
    }
  }

  private final DeviceId device = DeviceId.random();

  @Test
  void should_take_over_old_connection_when_same_device_registers_again() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    CountingConnection second = new CountingConnection();

    registry.register(device, true, false, first);
    registry.register(device, true, false, second);

    assertThat(first.takeOvers).hasValue(1);
    assertThat(second.takeOvers).hasValue(0);
    assertThat(registry.activeSessions()).isEqualTo(1);
  }

  @Test
  void should_not_take_over_when_other_device_registers() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();

    registry.register(device, true, false, first);
    registry.register(DeviceId.random(), true, false, new CountingConnection());

    assertThat(first.takeOvers).hasValue(0);
    assertThat(registry.activeSessions()).isEqualTo(2);
  }

  @Test
  void should_resume_session_when_clean_session_0_reconnects_within_expiry() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    SessionRegistry.Registration initial = registry.register(device, false, true, first);
    initial.state().subscriptions().put("v1/devices/me/attributes", 1);
    initial.state().awaitingRelease().add(9);
    registry.unregister(device, Duration.ofHours(1), first);

    SessionRegistry.Registration resumed =
        registry.register(device, false, true, new CountingConnection());

    assertThat(initial.sessionPresent()).isFalse();
    assertThat(resumed.sessionPresent()).isTrue();
    assertThat(resumed.state()).isSameAs(initial.state());
    assertThat(resumed.state().subscriptions()).containsEntry("v1/devices/me/attributes", 1);
    assertThat(resumed.state().awaitingRelease()).containsExactly(9);
  }

  @Test
  void should_start_fresh_session_when_clean_session_0_reconnects_after_expiry() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    SessionRegistry.Registration initial = registry.register(device, false, true, first);
    initial.state().awaitingRelease().add(9);
    registry.unregister(device, Duration.ZERO, first);

    SessionRegistry.Registration next =
        registry.register(device, false, true, new CountingConnection());

    assertThat(next.sessionPresent()).isFalse();
    assertThat(next.state()).isNotSameAs(initial.state());
    assertThat(next.state().awaitingRelease()).isEmpty();
  }

  @Test
  void should_keep_session_while_connected_when_expiry_is_zero() {
    SessionRegistry registry = new SessionRegistry();
    registry.register(device, false, true, new CountingConnection());

    // Expiry counts from disconnect: a connected session never expires.
    assertThat(registry.expire()).isZero();
    assertThat(registry.register(device, false, true, new CountingConnection()).sessionPresent())
        .isTrue();
  }

  @Test
  void should_keep_a_clean_start_session_that_asks_to_outlive_its_connection() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    // MQTT 5: Clean Start = 1 with a Session Expiry Interval.
    SessionRegistry.Registration initial = registry.register(device, true, true, first);
    initial.state().awaitingRelease().add(3);
    registry.unregister(device, Duration.ofMinutes(5), first);

    SessionRegistry.Registration next =
        registry.register(device, false, true, new CountingConnection());

    assertThat(next.sessionPresent()).isTrue();
    assertThat(next.state().awaitingRelease()).containsExactly(3);
  }

  @Test
  void should_discard_a_resumed_session_when_its_expiry_is_zero() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    registry.register(device, false, true, first);
    registry.unregister(device, Duration.ofMinutes(5), first);
    // MQTT 5: Clean Start = 0 resumes it, Session Expiry Interval 0 ends it with this connection.
    CountingConnection second = new CountingConnection();
    assertThat(registry.register(device, false, false, second).sessionPresent()).isTrue();
    registry.unregister(device, Duration.ZERO, second);

    assertThat(registry.register(device, false, true, new CountingConnection()).sessionPresent())
        .isFalse();
  }

  @Test
  void should_drop_expired_sessions_when_swept() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    registry.register(device, false, true, first);
    registry.unregister(device, Duration.ofNanos(1), first);

    assertThat(registry.expire()).isEqualTo(1);
    assertThat(registry.persistentSessions()).isZero();
  }

  @Test
  void should_discard_previous_session_when_clean_session_is_1() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    SessionRegistry.Registration persistent = registry.register(device, false, true, first);
    persistent.state().awaitingRelease().add(3);
    registry.unregister(device, Duration.ofHours(1), first);

    CountingConnection clean = new CountingConnection();
    SessionRegistry.Registration cleanRegistration = registry.register(device, true, false, clean);
    registry.unregister(device, Duration.ZERO, clean);
    SessionRegistry.Registration later =
        registry.register(device, false, true, new CountingConnection());

    assertThat(cleanRegistration.sessionPresent()).isFalse();
    assertThat(cleanRegistration.state().awaitingRelease()).isEmpty();
    assertThat(later.sessionPresent()).isFalse();
    assertThat(later.state().awaitingRelease()).isEmpty();
  }

  @Test
  void should_not_affect_successor_when_taken_over_connection_unregisters() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection first = new CountingConnection();
    CountingConnection second = new CountingConnection();
    registry.register(device, false, true, first);
    SessionRegistry.Registration successor = registry.register(device, false, true, second);

    registry.unregister(device, Duration.ZERO, first);

    assertThat(registry.activeSessions()).isEqualTo(1);
    // Had the old connection's unregister started the (zero) expiry, the sweep would drop the
    // successor's live session.
    assertThat(registry.expire()).isZero();
    registry.unregister(device, Duration.ZERO, second);
    assertThat(registry.activeSessions()).isZero();
    assertThat(successor.sessionPresent()).isTrue();
  }

  @Test
  void should_close_the_local_session_when_the_cluster_asks_through_session_closer() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection local = new CountingConnection();
    registry.register(device, true, false, local);
    SessionCloser closer = registry;

    assertThat(closer.closeSession(device)).isTrue();
    assertThat(local.takeOvers).hasValue(1);
  }

  @Test
  void should_end_a_kept_session_when_the_cluster_says_its_device_connected_elsewhere() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection connected = new CountingConnection();
    registry.register(device, false, true, connected);
    DeviceId away = DeviceId.random();
    CountingConnection gone = new CountingConnection();
    registry.register(away, false, true, gone);
    registry.unregister(away, Duration.ofHours(1), gone);

    assertThat(registry.closeSession(device)).isTrue();
    registry.unregister(device, Duration.ofHours(1), connected); // its close, on its event loop
    assertThat(registry.closeSession(away)).isFalse();

    assertThat(registry.persistentSessions()).isZero();
    assertThat(registry.register(device, false, true, new CountingConnection()).sessionPresent())
        .isFalse();
    assertThat(registry.register(away, false, true, new CountingConnection()).sessionPresent())
        .isFalse();
  }

  @Test
  void should_report_no_session_when_the_cluster_asks_for_a_device_not_connected_here() {
    SessionRegistry registry = new SessionRegistry();
    CountingConnection local = new CountingConnection();
    registry.register(device, true, false, local);
    registry.unregister(device, Duration.ZERO, local);

    assertThat(registry.closeSession(device)).isFalse();
    assertThat(registry.closeSession(DeviceId.random())).isFalse();
    assertThat(local.takeOvers).hasValue(0);
  }
}
