/**
 * What every step of the message path shares. Per connection: {@link
 * io.fieldline.transport.mqtt.session.Connection} (handshake state, the {@link
 * io.fieldline.transport.mqtt.session.Pause} reasons that switch socket reading off and on, the
 * keep-alive rule, and the one way a connection ends, with its {@link
 * io.fieldline.transport.mqtt.session.CloseReason}). Per device: {@link
 * io.fieldline.transport.mqtt.session.SessionRegistry} (one session per device on this node; the
 * node's {@code SessionCloser} for the cluster) and the {@link
 * io.fieldline.transport.mqtt.session.SessionState} a CleanSession=0 session keeps. Per server:
 * {@link io.fieldline.transport.mqtt.session.SessionContext}. Depends on no other feature package.
 */
@NullMarked
package io.fieldline.transport.mqtt.session;

import org.jspecify.annotations.NullMarked;
