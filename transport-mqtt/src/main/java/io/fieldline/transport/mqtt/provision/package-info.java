/**
 * ThingsBoard's provisioning session on MQTT: a client that connects with the user name or client
 * id {@code provision} ({@code connect}'s {@code ProvisionLogin}) gets a session that may only
 * subscribe to {@code /provision/response} and publish one request to {@code /provision/request};
 * {@link io.fieldline.transport.mqtt.provision.ProvisionSession} hands the request to common's
 * {@link io.fieldline.common.provision.DeviceProvisioning} port, publishes the answer and closes
 * the connection. Such a session is never a device's: it is not registered, not announced to the
 * cluster, and keeps counting as an unauthenticated connection. Confined to the channel's event
 * loop.
 */
@NullMarked
package io.fieldline.transport.mqtt.provision;

import org.jspecify.annotations.NullMarked;
