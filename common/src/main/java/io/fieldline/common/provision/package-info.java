/**
 * Self-provisioning, ThingsBoard's device side: a device that has no credential yet sends a
 * provisioning request ({@link io.fieldline.common.provision.ProvisionRequest}: its name, a
 * profile's provision key and secret, optionally the credential it wants) and gets its credential
 * back ({@link io.fieldline.common.provision.ProvisionResponse}). Transports (MQTT's {@code
 * /provision/request}, HTTP's {@code POST /api/v1/provision}) hand the request's bytes to the
 * {@link io.fieldline.common.provision.DeviceProvisioning} port and send back its answer.
 */
@NullMarked
package io.fieldline.common.provision;

import org.jspecify.annotations.NullMarked;
