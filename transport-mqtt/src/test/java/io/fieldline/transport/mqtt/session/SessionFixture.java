package io.fieldline.transport.mqtt.session;

import io.fieldline.common.DeviceGateway;
import io.fieldline.common.PayloadParser;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.testkit.FakeDeadLetterStore;
import io.fieldline.transport.mqtt.testkit.FakeDeviceGateway;
import io.fieldline.transport.mqtt.testkit.FakeDeviceRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * What the connections of one server share: config, fakes for the ports, the session registry and
 * the meters. {@link #open()} starts one connection through the real pipeline.
 */
final class SessionFixture {

  final MqttTransportConfig config;
  final FakeDeviceRegistry registry = new FakeDeviceRegistry();
  final FakeDeviceGateway gateway = new FakeDeviceGateway();
  final FakeDeadLetterStore deadLetters = new FakeDeadLetterStore();
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final SessionRegistry sessions;
  final SessionContext context;
  volatile boolean storageOverloaded;

  SessionFixture(MqttTransportConfig config) {
    this(config, null);
  }

  /** With {@code gateway} instead of {@link #gateway} (null: the fake). */
  SessionFixture(MqttTransportConfig config, @Nullable DeviceGateway gateway) {
    this.config = config;
    this.sessions = new SessionRegistry(config.sessionExpiry());
    this.context =
        new SessionContext(
            config,
            registry,
            gateway != null ? gateway : this.gateway,
            deadLetters,
            PayloadParser.defaults(),
            sessions,
            new MqttMetrics(meters),
            () -> storageOverloaded);
  }

  SessionClient open() {
    return new SessionClient(this);
  }

  /** The count of a counter, 0 if it was never registered. */
  double count(String name, String... tags) {
    Counter counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  double rejected(String reason) {
    return count("fieldline.mqtt.rejected", "reason", reason);
  }
}
