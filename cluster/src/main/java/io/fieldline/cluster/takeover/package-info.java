/**
 * One MQTT session per device across the cluster: notices sent to the other nodes when a device
 * connects here, and the service that receives them. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.takeover;

import org.jspecify.annotations.NullMarked;
