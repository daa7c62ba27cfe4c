/**
 * Device profiles in Cassandra, the {@link io.fieldline.common.profile.DeviceProfileStore} port:
 * {@link io.fieldline.dao.cassandra.profile.CassandraDeviceProfileStore} keeps each profile's row
 * ({@code ProfileTable}, {@code device_profiles}), its unique name and provision key as claims
 * reserved by lightweight transactions ({@code ProfileClaims}), the one default profile, and the
 * profile of each device ({@code ProfileLinks}: {@code devices.device_profile_id} and the {@code
 * devices_by_profile} list a delete checks). The conventions are the device registry's: a claim is
 * not the truth, the row it names must confirm it; rows are changed by lightweight transactions
 * conditioned on the row as read.
 *
 * <p>Threads: stages complete on driver I/O threads; nothing here blocks except the constructors
 * (statement preparation, at start). Called by the REST API and the provisioning service, never on
 * the message path.
 */
@NullMarked
package io.fieldline.dao.cassandra.profile;

import org.jspecify.annotations.NullMarked;
