/**
 * The device-facing MQTT 3.1.1 server (ThingsBoard device API). {@link
 * io.fieldline.transport.mqtt.MqttServer} is the entry point; it depends only on the ports in
 * {@code io.fieldline.common} and knows nothing of actors or Cassandra.
 */
@NullMarked
package io.fieldline.transport.mqtt;

import org.jspecify.annotations.NullMarked;
