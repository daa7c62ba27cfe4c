/**
 * Fieldline's shared vocabulary: device identities, typed key/values, the messages a device sends
 * and the ports through which the transport, the actors, the storage and the REST API meet without
 * knowing each other: the write side ({@link io.fieldline.common.DeviceRegistry}, {@link
 * io.fieldline.common.TelemetryStore}, {@link io.fieldline.common.DeadLetterStore}, {@link
 * io.fieldline.common.DeviceGateway}) and the read side ({@link
 * io.fieldline.common.TelemetryQueries} with {@link io.fieldline.common.HistoryQuery}, {@link
 * io.fieldline.common.DeadLetterQueries}), and device credentials ({@link
 * io.fieldline.common.DeviceCredentials}, administered through {@link
 * io.fieldline.common.DeviceCredentialsStore}, revoked across nodes through {@link
 * io.fieldline.common.CredentialsRevocation}).
 */
@NullMarked
package io.fieldline.common;

import org.jspecify.annotations.NullMarked;
