/**
 * Self-provisioning, the service behind common's {@link
 * io.fieldline.common.provision.DeviceProvisioning} port ({@link
 * io.fieldline.fleet.provision.Provisioning}): it checks a request's provision key and secret
 * against the device profiles, creates or finds the device, and answers its credential, within the
 * rate limits of {@link io.fieldline.fleet.provision.ProvisionThrottle} ({@code
 * fieldline.provision}, {@link io.fieldline.fleet.provision.ProvisionConfig}); every outcome and
 * refusal counted in {@link io.fieldline.fleet.provision.ProvisionMetrics}. The server builds one
 * per node; the MQTT transport's {@code provision} login and the HTTP device API's {@code POST
 * /api/v1/provision} share it (one throttle), with the same JSON.
 *
 * <p>Threads: the service never blocks; its stages complete on driver I/O threads. The throttle is
 * shared by every caller (short critical sections).
 */
@NullMarked
package io.fieldline.fleet.provision;

import org.jspecify.annotations.NullMarked;
