/**
 * Step 2 of the message path: the CONNECT handshake. {@link
 * io.fieldline.transport.mqtt.connect.ConnectHandshake} checks the CONNECT ({@code ConnectChecks}),
 * looks the access token up asynchronously while the socket is not read (what the client pipelined
 * behind CONNECT waits in the pipeline's flow control), and answers: CONNACK 0x00 with the session
 * registered on this node and announced to the cluster, or a refusing CONNACK ({@code
 * ConnectRefusal}) and close. Everything here runs on the channel's event loop.
 */
@NullMarked
package io.fieldline.transport.mqtt.connect;

import org.jspecify.annotations.NullMarked;
