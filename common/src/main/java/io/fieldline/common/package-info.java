/**
 * Fieldline's shared vocabulary: device identities, typed key/values, the messages a device sends,
 * ThingsBoard payload parsing, and the ports ({@link io.fieldline.common.DeviceRegistry}, {@link
 * io.fieldline.common.TelemetryStore}, {@link io.fieldline.common.DeadLetterStore}, {@link
 * io.fieldline.common.DeviceGateway}) through which the transport, the actors and the storage meet
 * without knowing each other.
 */
@NullMarked
package io.fieldline.common;

import org.jspecify.annotations.NullMarked;
