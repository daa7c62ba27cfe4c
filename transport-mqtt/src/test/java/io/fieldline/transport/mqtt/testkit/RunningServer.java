package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.device.Device;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.port.SessionTakeover;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.MqttServer;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;

/**
 * The transport on a real socket (127.0.0.1, a free port, one I/O thread) with fakes for the ports
 * and the real {@link LocalDeviceEvents} as the event path, wired as the composition root wires it.
 * Fields are the test's handles.
 */
public final class RunningServer implements AutoCloseable {

  public final FakeDeviceRegistry registry = new FakeDeviceRegistry();
  public final FakeDeviceInbox gateway = new FakeDeviceInbox();
  public final FakeTelemetryQueries queries = new FakeTelemetryQueries();
  public final LocalDeviceEvents events = new LocalDeviceEvents();
  public final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  public final SessionRegistry sessions = new SessionRegistry();
  public final MqttServer server;
  public final int port;

  /** Starts a server; {@code overrides} are keys under {@code fieldline.mqtt}. */
  public RunningServer(String... overrides) {
    List<String> all = new ArrayList<>(List.of("worker-threads = 1"));
    all.addAll(List.of(overrides));
    server =
        new MqttServer(
            TestConfigs.mqtt(all.toArray(new String[0])),
            registry,
            gateway,
            new FakeDeadLetterStore(),
            PayloadParser.defaults(),
            List.of(),
            meters,
            sessions,
            SessionTakeover.LOCAL_ONLY,
            events,
            queries);
    port = server.start().getPort();
  }

  /** A device whose access token is {@code token}. */
  public Device device(String token) {
    return registry.add(token);
  }

  /** The count of a counter, 0 if it was never registered. */
  public double count(String name, String... tags) {
    Counter counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  /** The value of a gauge. */
  public double gauge(String name) {
    Gauge gauge = meters.get(name).gauge();
    return gauge.value();
  }

  @Override
  public void close() {
    server.close();
  }
}
