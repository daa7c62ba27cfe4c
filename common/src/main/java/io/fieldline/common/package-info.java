/**
 * Fieldline's shared vocabulary: device identities, typed key/values, the messages a device sends
 * and the ports through which the transport, the actors, the storage and the REST API meet without
 * knowing each other: the write side ({@link io.fieldline.common.device.DeviceRegistry}, {@link
 * io.fieldline.common.port.TelemetryStore}, {@link io.fieldline.common.deadletter.DeadLetterStore},
 * {@link io.fieldline.common.port.DeviceInbox}) and the read side ({@link
 * io.fieldline.common.query.TelemetryQueries} with {@link io.fieldline.common.query.HistoryQuery},
 * {@link io.fieldline.common.deadletter.DeadLetterQueries}), and device credentials ({@link
 * io.fieldline.common.credentials.DeviceCredentials}, administered through {@link
 * io.fieldline.common.device.DeviceCredentialsStore}, revoked across nodes through {@link
 * io.fieldline.common.credentials.CredentialsRevocation}).
 */
@NullMarked
package io.fieldline.common;

import org.jspecify.annotations.NullMarked;
