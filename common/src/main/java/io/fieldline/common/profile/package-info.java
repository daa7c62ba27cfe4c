/**
 * Device profiles, ThingsBoard's shape: what devices of one kind share, here the provisioning
 * settings a device uses to register itself ({@link io.fieldline.common.profile.ProvisionType}, a
 * provision key and a secret kept only as a salted hash, {@link
 * io.fieldline.common.profile.ProvisionSecret}), and the port through which the REST API and
 * provisioning store them and link devices to them ({@link
 * io.fieldline.common.profile.DeviceProfileStore}).
 */
@NullMarked
package io.fieldline.common.profile;

import org.jspecify.annotations.NullMarked;
