/**
 * Self-provisioning, the service behind common's {@link
 * io.fieldline.common.provision.DeviceProvisioning} port ({@link
 * io.fieldline.server.provision.Provisioning}): it checks a request's provision key and secret
 * against the device profiles, creates or finds the device, and answers its credential, within the
 * rate limits of {@link io.fieldline.server.provision.ProvisionThrottle} ({@code
 * fieldline.provision}, {@link io.fieldline.server.provision.ProvisionConfig}); every outcome and
 * refusal counted in {@link io.fieldline.server.provision.ProvisionMetrics}. The MQTT transport
 * reaches the service through the registry it is given ({@link
 * io.fieldline.server.provision.ProvisioningRegistry}); the HTTP device API calls it with the same
 * JSON.
 *
 * <p>Threads: the service never blocks; its stages complete on driver I/O threads. The throttle is
 * shared by every caller (short critical sections).
 */
@NullMarked
package io.fieldline.server.provision;

import org.jspecify.annotations.NullMarked;
