package io.fieldline.transport.mqtt.session;

import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.common.port.SessionTakeover;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.DeviceServices;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Everything the connections of one server share: settings, the ports they call and the meters they
 * count in. Immutable; its components are thread-safe.
 *
 * @param config transport settings
 * @param registry token lookup for CONNECT
 * @param gateway where parsed messages go
 * @param deadLetters where unparseable payloads go (policy {@code dead-letter})
 * @param parser ThingsBoard JSON parser
 * @param sessions one session per device on this node, persistent session state
 * @param takeover told of every session accepted here (one session per device across a cluster)
 * @param metrics the transport's meters
 * @param preAuth the limits connections meet before they are authenticated
 * @param events where sessions listen for their device's events (shared attributes, RPC) and
 *     announce their RPC subscriptions
 * @param queries attribute reads for {@code v1/devices/me/attributes/request/{n}}
 * @param storageOverloaded whether the storage layer currently asks sockets to pause
 * @param services firmware downloads ({@code v2/fw/request/...}) and provisioning
 * @param childCreations the node's budget of gateway child creations, shared by every gateway
 *     session
 */
public record SessionContext(
    MqttTransportConfig config,
    DeviceRegistry registry,
    DeviceInbox gateway,
    DeadLetterStore deadLetters,
    PayloadParser parser,
    SessionRegistry sessions,
    SessionTakeover takeover,
    MqttMetrics metrics,
    PreAuthLimits preAuth,
    DeviceEvents events,
    TelemetryQueries queries,
    BooleanSupplier storageOverloaded,
    DeviceServices services,
    ChildCreationPermits childCreations) {

  /**
   * A context with a budget of child creations of its own ({@code
   * gateway.max-concurrent-creations}).
   */
  public SessionContext(
      MqttTransportConfig config,
      DeviceRegistry registry,
      DeviceInbox gateway,
      DeadLetterStore deadLetters,
      PayloadParser parser,
      SessionRegistry sessions,
      SessionTakeover takeover,
      MqttMetrics metrics,
      PreAuthLimits preAuth,
      DeviceEvents events,
      TelemetryQueries queries,
      BooleanSupplier storageOverloaded,
      DeviceServices services) {
    this(
        config,
        registry,
        gateway,
        deadLetters,
        parser,
        sessions,
        takeover,
        metrics,
        preAuth,
        events,
        queries,
        storageOverloaded,
        services,
        new ChildCreationPermits(config.gateway().maxConcurrentCreations()));
  }

  /** A context without firmware downloads or provisioning ({@link DeviceServices#none()}). */
  public SessionContext(
      MqttTransportConfig config,
      DeviceRegistry registry,
      DeviceInbox gateway,
      DeadLetterStore deadLetters,
      PayloadParser parser,
      SessionRegistry sessions,
      SessionTakeover takeover,
      MqttMetrics metrics,
      PreAuthLimits preAuth,
      DeviceEvents events,
      TelemetryQueries queries,
      BooleanSupplier storageOverloaded) {
    this(
        config,
        registry,
        gateway,
        deadLetters,
        parser,
        sessions,
        takeover,
        metrics,
        preAuth,
        events,
        queries,
        storageOverloaded,
        DeviceServices.none());
  }

  /** Firmware downloads: bounds, source, meters. */
  public FirmwareDelivery firmware() {
    return services.firmware();
  }

  /** What answers a {@code provision} login's requests, if provisioning is offered. */
  public Optional<DeviceProvisioning> provisioning() {
    return services.provisioning();
  }
}
