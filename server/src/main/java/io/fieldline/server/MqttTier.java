package io.fieldline.server;

import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.PayloadParser;
import io.fieldline.common.PressureGauge;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.fieldline.server.provision.ProvisionConfig;
import io.fieldline.server.provision.Provisioning;
import io.fieldline.server.provision.ProvisioningRegistry;
import io.fieldline.transport.mqtt.MqttServer;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MQTT tier: the Netty listener. It authenticates through the storage tier's registry, submits
 * each message to the cluster tier's gateway (the local device actors on a single node), and stops
 * reading sockets while any storage or forwarding gauge is high. Its session registry is built
 * before the cluster (which closes sessions through it) and handed in.
 *
 * @param server the listening transport
 * @param provisioning the provisioning service the transport answers {@code /provision/request}
 *     with, for the HTTP device API's {@code POST /api/v1/provision} to share (one throttle per
 *     node); null when the storage serves no device profiles
 */
record MqttTier(MqttServer server, @Nullable DeviceProvisioning provisioning) {

  private static final Logger LOG = LoggerFactory.getLogger(MqttTier.class);

  static MqttTier start(
      MqttTransportConfig config,
      SessionRegistry sessions,
      ServerConfig serverConfig,
      CassandraStorage storage,
      DeviceTier devices,
      ClusterTier cluster,
      DeviceEvents events,
      MeterRegistry metrics,
      StopSteps stops) {
    List<PressureGauge> pressure = new ArrayList<>(storage.pressure());
    pressure.addAll(cluster.pressure());
    DeviceRegistry registry = withProvisioning(storage, devices, metrics);
    MqttServer server =
        new MqttServer(
            config,
            registry,
            cluster.gateway(devices.gateway()),
            storage.deadLetters(),
            new PayloadParser(
                serverConfig.payloadTypeCast(), serverConfig.payloadMaxStringValueLength()),
            pressure,
            metrics,
            sessions,
            cluster.takeover(),
            events,
            storage.queries());
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
    return new MqttTier(
        server, registry instanceof DeviceProvisioning provisioning ? provisioning : null);
  }

  /**
   * The registry the transport authenticates with, with the provisioning service beside it (a
   * {@code provision} login finds it there): the storage's registry serves the device profiles, and
   * {@code fieldline.provision} is read from the root configuration the actor system was built
   * with.
   */
  private static DeviceRegistry withProvisioning(
      CassandraStorage storage, DeviceTier devices, MeterRegistry metrics) {
    DeviceRegistry registry = storage.deviceRegistry();
    if (!(registry instanceof DeviceProfileStore profiles)) {
      LOG.warn("device profiles unavailable: MQTT provisioning is off");
      return registry;
    }
    Provisioning provisioning =
        new Provisioning(
            profiles,
            registry,
            storage.credentialsStore(),
            ProvisionConfig.from(devices.system().settings().config()),
            metrics);
    return new ProvisioningRegistry(registry, provisioning);
  }
}
