package io.fieldline.transport.mqtt.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.session.PreAuthLimits.Admission;
import io.fieldline.transport.mqtt.testkit.TestConfigs;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PreAuthLimitsTest {

  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private final List<EmbeddedChannel> channels = new ArrayList<>();

  @AfterEach
  void closeChannels() {
    channels.forEach(EmbeddedChannel::finishAndReleaseAll);
  }

  private PreAuthLimits limits(String... overrides) {
    return new PreAuthLimits(TestConfigs.mqtt(overrides), clock::get);
  }

  private EmbeddedChannel from(String ip) {
    EmbeddedChannel channel =
        new EmbeddedChannel() {
          @Override
          protected SocketAddress remoteAddress0() {
            return new InetSocketAddress(ip, 40_000);
          }
        };
    channels.add(channel);
    return channel;
  }

  @Test
  void should_refuse_new_connections_when_unauthenticated_cap_is_reached() {
    PreAuthLimits limits = limits("max-unauthenticated-connections = 2");
    EmbeddedChannel first = from("10.0.0.1");

    assertThat(limits.admit(first)).isEqualTo(Admission.ADMITTED);
    assertThat(limits.admit(from("10.0.0.2"))).isEqualTo(Admission.ADMITTED);
    assertThat(limits.admit(from("10.0.0.3"))).isEqualTo(Admission.UNAUTHENTICATED_LIMIT);
    assertThat(limits.unauthenticated()).isEqualTo(2);
    assertThat(limits.open()).isEqualTo(2);

    limits.authenticated(first);

    assertThat(limits.unauthenticated()).isEqualTo(1);
    assertThat(limits.admit(from("10.0.0.4"))).isEqualTo(Admission.ADMITTED);
    assertThat(limits.open()).isEqualTo(3);
  }

  @Test
  void should_release_counts_once_when_channel_closes() {
    PreAuthLimits limits = limits("max-unauthenticated-connections = 2");
    EmbeddedChannel authenticated = from("10.0.0.1");
    EmbeddedChannel anonymous = from("10.0.0.2");
    limits.admit(authenticated);
    limits.admit(anonymous);
    limits.authenticated(authenticated);
    limits.authenticated(authenticated);

    authenticated.close();
    anonymous.close();

    assertThat(limits.unauthenticated()).isZero();
    assertThat(limits.open()).isZero();
  }

  @Test
  void should_refuse_when_max_connections_is_reached_even_if_authenticated() {
    PreAuthLimits limits = limits("max-connections = 1", "max-unauthenticated-connections = 1");
    EmbeddedChannel first = from("10.0.0.1");
    limits.admit(first);
    limits.authenticated(first);

    assertThat(limits.admit(from("10.0.0.2"))).isEqualTo(Admission.CONNECTION_LIMIT);
  }

  @Test
  void should_limit_connection_rate_per_address_when_burst_is_spent() {
    PreAuthLimits limits =
        limits("per-address-connection-rate = 1", "per-address-connection-burst = 2");

    assertThat(limits.admit(from("10.0.0.1"))).isEqualTo(Admission.ADMITTED);
    assertThat(limits.admit(from("10.0.0.1"))).isEqualTo(Admission.ADMITTED);
    assertThat(limits.admit(from("10.0.0.1"))).isEqualTo(Admission.CONNECTION_RATE);
    assertThat(limits.admit(from("10.0.0.2"))).isEqualTo(Admission.ADMITTED);
    assertThat(limits.open()).isEqualTo(3);

    clock.addAndGet(TimeUnit.SECONDS.toNanos(1));

    assertThat(limits.admit(from("10.0.0.1"))).isEqualTo(Admission.ADMITTED);
  }

  @Test
  void should_not_limit_connection_rate_when_rate_is_zero() {
    PreAuthLimits limits =
        limits("per-address-connection-rate = 0", "per-address-connection-burst = 1");

    for (int i = 0; i < 10; i++) {
      assertThat(limits.admit(from("10.0.0.1"))).isEqualTo(Admission.ADMITTED);
    }
  }

  @Test
  void should_stop_authenticating_an_address_when_its_failed_auth_budget_is_spent() {
    PreAuthLimits limits =
        limits("per-address-failed-auth-burst = 2", "per-address-failed-auth-refill = 1 s");
    EmbeddedChannel guesser = from("10.0.0.1");

    limits.authenticationFailed(guesser);
    assertThat(limits.mayAuthenticate(guesser)).isTrue();
    limits.authenticationFailed(guesser);

    assertThat(limits.mayAuthenticate(guesser)).isFalse();
    assertThat(limits.mayAuthenticate(from("10.0.0.2"))).isTrue();

    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(999));
    assertThat(limits.mayAuthenticate(guesser)).isFalse();
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
    assertThat(limits.mayAuthenticate(guesser)).isTrue();
  }

  @Test
  void should_not_limit_failed_auth_when_burst_is_zero() {
    PreAuthLimits limits = limits("per-address-failed-auth-burst = 0");
    EmbeddedChannel guesser = from("10.0.0.1");
    for (int i = 0; i < 100; i++) {
      limits.authenticationFailed(guesser);
    }

    assertThat(limits.mayAuthenticate(guesser)).isTrue();
  }

  @Test
  void should_bound_the_address_table_when_many_addresses_connect() {
    PreAuthLimits limits = limits("per-address-table-size = 3");

    for (int i = 1; i <= 50; i++) {
      limits.admit(from("10.0.1." + i));
    }

    assertThat(limits.trackedAddresses()).isEqualTo(3);
  }
}
