/**
 * The bounds a device meets whichever transport it speaks ({@link
 * io.fieldline.transport.common.bounds.DeviceBoundsConfig}): largest message, messages being stored
 * at once, client-side RPC and attribute-read rates, pending server-side RPC, and what happens to
 * an invalid payload. Read once from the {@code fieldline.mqtt} keys (their historical names) by
 * the MQTT transport and the HTTP device API alike.
 */
@NullMarked
package io.fieldline.transport.common.bounds;

import org.jspecify.annotations.NullMarked;
