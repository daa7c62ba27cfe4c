/** MQTT over TLS: the server's certificate, reloaded when its files change. */
@NullMarked
package io.fieldline.transport.mqtt.tls;

import org.jspecify.annotations.NullMarked;
