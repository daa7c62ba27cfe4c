/**
 * Step 7 of the message path, the data structure behind it: {@link
 * io.fieldline.transport.mqtt.ack.OrderedAckWindow} keeps a connection's PUBLISHes in arrival order
 * and releases acknowledgements only for leading completed ones (MQTT 3.1.1 §4.6), reporting a
 * failure only when it reaches the head. Used by {@code publish}; knows nothing of Netty.
 */
@NullMarked
package io.fieldline.transport.mqtt.ack;

import org.jspecify.annotations.NullMarked;
