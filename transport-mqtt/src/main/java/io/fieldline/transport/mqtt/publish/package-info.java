/**
 * Steps 3, 4 and 7 of the message path: what happens to a PUBLISH of a connected session. {@link
 * io.fieldline.transport.mqtt.publish.InboundPublishes} takes a slot in the ordered-ack window and
 * hands the message to {@code PublishRouter}, which parses the topic ({@code DeviceTopic}) and the
 * payload and submits it to the device gateway, answers client-side RPC (transport-common's {@code
 * ClientRpcAnswers}) or dead-letters an invalid payload; the outcome comes back on the event loop
 * and the window sends PUBACK/PUBREC in arrival order. QoS 2's PUBREL → PUBCOMP is here too.
 */
@NullMarked
package io.fieldline.transport.mqtt.publish;

import org.jspecify.annotations.NullMarked;
