package io.fieldline.transport.mqtt.session;

import io.fieldline.common.DeadLetterStore;
import io.fieldline.common.DeviceGateway;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.PayloadParser;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import java.util.function.BooleanSupplier;

/**
 * Everything a session handler needs, shared by all connections of one server.
 *
 * @param config transport settings
 * @param registry token lookup for CONNECT
 * @param gateway where parsed messages go
 * @param deadLetters where unparseable payloads go (policy {@code dead-letter})
 * @param parser ThingsBoard JSON parser
 * @param sessions one session per device, persistent session state
 * @param metrics the transport's meters
 * @param storageOverloaded whether the storage layer currently asks sockets to pause
 */
public record SessionContext(
    MqttTransportConfig config,
    DeviceRegistry registry,
    DeviceGateway gateway,
    DeadLetterStore deadLetters,
    PayloadParser parser,
    SessionRegistry sessions,
    MqttMetrics metrics,
    BooleanSupplier storageOverloaded) {}
