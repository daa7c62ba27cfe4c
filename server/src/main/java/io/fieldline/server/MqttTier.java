package io.fieldline.server;

import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.DeviceServices;
import io.fieldline.transport.mqtt.MqttServer;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MQTT tier: the Netty listener. It authenticates through the storage tier's registry, submits
 * each message to the cluster tier's gateway (the local device actors on a single node), and stops
 * reading sockets while any storage or forwarding gauge is high. Its session registry is built
 * before the cluster (which closes sessions through it) and handed in.
 *
 * @param server the listening transport
 */
record MqttTier(MqttServer server) {

  private static final Logger LOG = LoggerFactory.getLogger(MqttTier.class);

  static MqttTier start(
      MqttTransportConfig config,
      SessionRegistry sessions,
      ServerConfig serverConfig,
      CassandraStorage storage,
      DeviceTier devices,
      ClusterTier cluster,
      DeviceEvents events,
      DeviceServices services,
      MeterRegistry metrics,
      StopSteps stops) {
    List<PressureGauge> pressure = new ArrayList<>(storage.pressure());
    pressure.addAll(cluster.pressure());
    MqttServer server =
        new MqttServer(
            config,
            storage.deviceRegistry(),
            cluster.gateway(devices.gateway()),
            storage.deadLetters(),
            new PayloadParser(
                serverConfig.payloadTypeCast(), serverConfig.payloadMaxStringValueLength()),
            pressure,
            metrics,
            sessions,
            cluster.takeover(),
            events,
            storage.queries(),
            services);
    server.start();
    stops.add(
        "MQTT",
        () -> {
          // Stop taking devices, let every accepted write finish and its PUBACK go out, then
          // close the connections.
          server.stopAccepting();
          LOG.info("draining in-flight writes (at most {})", devices.config().shutdownTimeout());
          cluster.drainForwarded();
          devices.drain();
          server.close();
        });
    return new MqttTier(server);
  }
}
