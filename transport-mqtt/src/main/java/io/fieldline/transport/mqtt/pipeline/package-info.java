/**
 * Step 1 of the message path: the Netty stages of one MQTT connection, in order (flush
 * consolidation → idle timer → decoder → encoder → session handler → last-resort exception
 * handler), their names, and the idle timer that enforces keep-alive (the connect timeout is the
 * session's deadline). Depends on nothing else of the transport but its settings.
 */
@NullMarked
package io.fieldline.transport.mqtt.pipeline;

import org.jspecify.annotations.NullMarked;
