/**
 * The device-facing MQTT 3.1.1 server (ThingsBoard device API). {@link
 * io.fieldline.transport.mqtt.MqttServer} is the entry point; it depends only on the ports in
 * {@code io.fieldline.common} and knows nothing of actors or Cassandra.
 *
 * <p>The message path is the package tree (steps as numbered in docs/architecture.md): {@code
 * pipeline} (the stages of a socket) → {@link io.fieldline.transport.mqtt.MqttSessionHandler}
 * (here: each decoded packet dispatched by type) → {@code connect} (CONNECT, token lookup, CONNACK)
 * → {@code publish} (PUBLISH routed, submitted to the device gateway) → {@code ack} (PUBACKs in
 * arrival order); {@code subscribe} answers SUBSCRIBE and UNSUBSCRIBE. {@code session} holds what
 * they share: a connection's lifecycle (read pauses, close reasons) and the sessions of this node.
 * This package also holds the settings ({@link io.fieldline.transport.mqtt.MqttTransportConfig})
 * and meters ({@link io.fieldline.transport.mqtt.MqttMetrics}) every path reads; the feature
 * packages use nothing else from it, and none of them uses another except through {@code session}
 * and {@code ack}.
 */
@NullMarked
package io.fieldline.transport.mqtt;

import org.jspecify.annotations.NullMarked;
