package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.transport.common.firmware.FirmwareConfig;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.firmware.FirmwareMetrics;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.DeviceServices;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.PreAuthLimits;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * What the connections of one server share: config, fakes for the ports, the session registry, the
 * cluster's takeover notices and the meters. {@link #open()} starts one connection through the real
 * pipeline. Fields are the test's handles on the fakes.
 */
public final class SessionFixture {

  public final MqttTransportConfig config;
  public final FakeDeviceRegistry registry = new FakeDeviceRegistry();
  public final FakeDeviceInbox gateway = new FakeDeviceInbox();
  public final FakeDeadLetterStore deadLetters = new FakeDeadLetterStore();
  public final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  public final LocalDeviceEvents events = new LocalDeviceEvents();
  public final FakeTelemetryQueries queries = new FakeTelemetryQueries();
  public final FakeFirmwareSource firmware = new FakeFirmwareSource();

  /** Devices whose session this node accepted, in order, as the cluster's takeover heard them. */
  public final List<DeviceId> announced = new CopyOnWriteArrayList<>();

  public final SessionRegistry sessions;
  public final SessionContext context;
  public volatile boolean storageOverloaded;

  public SessionFixture(MqttTransportConfig config) {
    this(config, null);
  }

  /** With {@code gateway} instead of {@link #gateway} (null: the fake). */
  public SessionFixture(MqttTransportConfig config, @Nullable DeviceInbox gateway) {
    this(config, gateway, TestConfigs.firmware());
  }

  /** With firmware downloads bounded by {@code firmwareConfig}, served from {@link #firmware}. */
  public SessionFixture(
      MqttTransportConfig config, @Nullable DeviceInbox gateway, FirmwareConfig firmwareConfig) {
    this.config = config;
    this.sessions = new SessionRegistry();
    this.context =
        new SessionContext(
            config,
            registry,
            gateway != null ? gateway : this.gateway,
            deadLetters,
            PayloadParser.defaults(),
            sessions,
            announced::add,
            new MqttMetrics(meters),
            new PreAuthLimits(config),
            events,
            queries,
            () -> storageOverloaded,
            new DeviceServices(
                new FirmwareDelivery(firmwareConfig, firmware, new FirmwareMetrics(meters)),
                Optional.empty()));
  }

  public SessionClient open() {
    return new SessionClient(this);
  }

  /** The count of a counter, 0 if it was never registered. */
  public double count(String name, String... tags) {
    Counter counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  /** The count of {@code fieldline.mqtt.rejected{reason}}. */
  public double rejected(String reason) {
    return count("fieldline.mqtt.rejected", "reason", reason);
  }
}
