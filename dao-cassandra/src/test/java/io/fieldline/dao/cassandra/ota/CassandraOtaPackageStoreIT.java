package io.fieldline.dao.cassandra.ota;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.ota.ChecksumAlgorithm;
import io.fieldline.common.ota.OtaPackageConflictException;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageDraft;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageType;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class CassandraOtaPackageStoreIT extends CassandraTestBase {

  private static final int CHUNK = CassandraOtaPackageStore.DATA_CHUNK_SIZE;

  private CassandraOtaPackageStore store;
  private final Random random = new Random(17);

  @BeforeAll
  void createStore() {
    store = new CassandraOtaPackageStore(session, config, WriteLimiter.from(config));
  }

  private OtaPackageInfo created(String title) {
    return await(
        store.create(
            new OtaPackageDraft(title, "1.0", OtaPackageType.FIRMWARE, null, null, "{\"a\":1}")));
  }

  private byte[] bytes(int size) {
    byte[] data = new byte[size];
    random.nextBytes(data);
    return data;
  }

  // Uploads data the way the REST API does: fixed-size chunks, then the completing transaction.
  private OtaPackageInfo uploaded(OtaPackageInfo pkg, byte[] data) {
    UUID upload = UUID.randomUUID();
    for (int index = 0; index * CHUNK < data.length; index++) {
      int from = index * CHUNK;
      byte[] chunk = Arrays.copyOfRange(data, from, Math.min(data.length, from + CHUNK));
      await(store.writeChunk(pkg.id(), upload, index, chunk));
    }
    return await(store.completeUpload(pkg.id(), upload, summary(data)));
  }

  private static OtaPackageData summary(byte[] data) {
    return new OtaPackageData(
        "fw.bin",
        "application/octet-stream",
        data.length,
        ChecksumAlgorithm.SHA256,
        ChecksumAlgorithm.SHA256.of(data));
  }

  private static Throwable failure(Runnable call) {
    try {
      call.run();
    } catch (AssertionError e) {
      Throwable cause = e.getCause();
      while (cause instanceof CompletionException
          || cause instanceof java.util.concurrent.ExecutionException) {
        cause = cause.getCause();
      }
      return cause;
    }
    throw new AssertionError("expected a failure");
  }

  @Test
  void should_read_back_every_byte_in_any_range_when_data_spans_several_chunks() {
    OtaPackageInfo pkg = created("spanning");
    byte[] data = bytes(3 * CHUNK + 1234);

    OtaPackageInfo stored = uploaded(pkg, data);

    assertThat(stored.data()).isEqualTo(summary(data));
    assertThat(await(store.find(pkg.id()))).contains(stored);
    ByteArrayOutputStream whole = new ByteArrayOutputStream();
    for (long offset = 0; offset < data.length; offset += 10_000) {
      whole.writeBytes(await(store.readData(pkg.id(), offset, 10_000)));
    }
    assertThat(whole.toByteArray()).isEqualTo(data);
    assertThat(await(store.readData(pkg.id(), CHUNK - 10, CHUNK)))
        .as("a range across a chunk boundary")
        .isEqualTo(Arrays.copyOfRange(data, CHUNK - 10, 2 * CHUNK - 10));
    assertThat(await(store.readData(pkg.id(), data.length, 100))).as("past the end").isEmpty();
    assertThat(await(store.readData(OtaPackageId.random(), 0, 100))).as("no package").isEmpty();
  }

  @Test
  void should_refuse_a_second_package_when_title_and_version_are_taken() {
    created("twice");

    assertThat(failure(() -> created("twice"))).isInstanceOf(OtaPackageConflictException.class);
    assertThat(await(store.all())).extracting(OtaPackageInfo::title).containsOnlyOnce("twice");
  }

  @Test
  void should_keep_the_first_data_when_a_second_upload_completes() {
    OtaPackageInfo pkg = created("immutable");
    byte[] first = bytes(1000);
    uploaded(pkg, first);

    UUID late = UUID.randomUUID();
    await(store.writeChunk(pkg.id(), late, 0, bytes(1000)));
    assertThat(failure(() -> await(store.completeUpload(pkg.id(), late, summary(bytes(5))))))
        .isInstanceOf(OtaPackageConflictException.class)
        .hasMessageContaining("already has data");
    await(store.abortUpload(pkg.id(), late));

    assertThat(await(store.readData(pkg.id(), 0, 2000))).isEqualTo(first);
    assertThat(
            session
                .execute(
                    "SELECT count(*) FROM " + keyspace + ".ota_package_data WHERE package_id = ?",
                    pkg.id().value())
                .one()
                .getLong(0))
        .as("the aborted upload's chunks removed")
        .isEqualTo(1);
  }

  @Test
  void should_not_create_a_row_when_an_upload_completes_after_the_delete() {
    OtaPackageInfo pkg = created("deleted-meanwhile");
    UUID upload = UUID.randomUUID();
    await(store.writeChunk(pkg.id(), upload, 0, bytes(10)));
    assertThat(await(store.delete(pkg.id()))).isTrue();

    assertThat(failure(() -> await(store.completeUpload(pkg.id(), upload, summary(bytes(10))))))
        .isInstanceOf(NoSuchElementException.class);
    assertThat(await(store.find(pkg.id()))).isEmpty();
  }

  @Test
  void should_refuse_the_delete_when_a_device_is_assigned_and_allow_it_once_unassigned() {
    OtaPackageInfo pkg = uploaded(created("assigned"), bytes(100));
    DeviceId device = DeviceId.random();
    assertThat(await(store.assign(device, pkg.id()))).isEmpty();
    assertThat(await(store.assignedFirmware(device))).contains(pkg);

    assertThat(failure(() -> await(store.delete(pkg.id()))))
        .isInstanceOf(OtaPackageConflictException.class)
        .hasMessageContaining(device.toString());
    assertThat(await(store.find(pkg.id()))).as("still there, not left deleting").isPresent();
    assertThat(await(store.assignedDevices(pkg.id(), 10))).containsExactly(device);

    assertThat(await(store.unassign(device))).contains(pkg.id());
    assertThat(await(store.delete(pkg.id()))).isTrue();
    assertThat(await(store.delete(pkg.id()))).as("nothing left to delete").isFalse();
    assertThat(await(store.find(pkg.id()))).isEmpty();
    assertThat(await(store.assignedFirmware(device))).isEmpty();
    created("assigned"); // the title and version are free again
  }

  @Test
  void should_move_the_device_when_it_is_assigned_another_package() {
    OtaPackageInfo first = uploaded(created("first"), bytes(10));
    OtaPackageInfo second = uploaded(created("second"), bytes(10));
    DeviceId device = DeviceId.random();
    await(store.assign(device, first.id()));

    assertThat(await(store.assign(device, second.id()))).contains(first.id());

    assertThat(await(store.assignment(device))).contains(second.id());
    assertThat(await(store.assignedDevices(first.id(), 10))).isEmpty();
    assertThat(await(store.delete(first.id()))).as("no longer in use").isTrue();
  }

  @Test
  void should_refuse_an_assignment_when_the_package_does_not_exist() {
    DeviceId device = DeviceId.random();
    OtaPackageId missing = OtaPackageId.random();

    assertThat(failure(() -> await(store.assign(device, missing))))
        .isInstanceOf(OtaPackageConflictException.class);
    assertThat(await(store.assignment(device))).isEqualTo(Optional.empty());
    assertThat(await(store.assignedDevices(missing, 10))).isEmpty();
  }

  @Test
  void should_ignore_a_stale_claim_when_the_package_is_deleted() {
    OtaPackageInfo pkg = uploaded(created("stale-claim"), bytes(10));
    DeviceId device = DeviceId.random();
    // A claim whose device row never followed (an assignment that died half-way).
    session.execute(
        "INSERT INTO " + keyspace + ".ota_package_devices (package_id, device_id) VALUES (?, ?)",
        pkg.id().value(),
        device.value());

    assertThat(await(store.delete(pkg.id()))).isTrue();
  }

  // What the profile store writes when a device is given a profile: the device's row.
  private DeviceId deviceWithProfile(DeviceProfileId profile) {
    DeviceId device = DeviceId.random();
    session.execute(
        "INSERT INTO " + keyspace + ".devices (id, name, device_profile_id) VALUES (?, ?, ?)",
        device.value(),
        "device-" + device,
        profile.value());
    return device;
  }

  @Test
  void
      should_serve_the_profiles_firmware_to_a_device_without_its_own_when_assigned_to_the_profile() {
    OtaPackageInfo ofProfile = uploaded(created("profile-fw"), bytes(100));
    OtaPackageInfo own = uploaded(created("own-fw"), bytes(100));
    DeviceProfileId profile = DeviceProfileId.random();
    DeviceId plain = deviceWithProfile(profile);
    DeviceId withOwn = deviceWithProfile(profile);
    await(store.assign(withOwn, own.id()));

    assertThat(await(store.assignToProfile(profile, ofProfile.id()))).isEmpty();

    assertThat(await(store.profileAssignment(profile))).contains(ofProfile.id());
    assertThat(await(store.assignedFirmware(plain))).contains(ofProfile);
    assertThat(await(store.assignedFirmware(withOwn))).as("its own first").contains(own);
    assertThat(await(store.assignment(plain))).as("no assignment of its own").isEmpty();
    assertThat(await(store.assignedFirmware(DeviceId.random()))).as("no such device").isEmpty();
    assertThat(await(store.unassignProfile(profile))).contains(ofProfile.id());
    assertThat(await(store.assignedFirmware(plain))).isEmpty();
    assertThat(await(store.unassignProfile(profile))).as("nothing left").isEmpty();
  }

  @Test
  void should_refuse_the_delete_when_a_profile_is_assigned_and_allow_it_once_another_is() {
    OtaPackageInfo first = uploaded(created("profile-first"), bytes(10));
    OtaPackageInfo second = uploaded(created("profile-second"), bytes(10));
    DeviceProfileId profile = DeviceProfileId.random();
    await(store.assignToProfile(profile, first.id()));

    assertThat(failure(() -> await(store.delete(first.id()))))
        .isInstanceOf(OtaPackageConflictException.class)
        .hasMessageContaining(profile.toString());
    assertThat(await(store.find(first.id()))).as("still there, not left deleting").isPresent();
    assertThat(await(store.assignedProfiles(first.id(), 10))).containsExactly(profile);

    assertThat(await(store.assignToProfile(profile, second.id()))).contains(first.id());
    assertThat(await(store.assignedProfiles(first.id(), 10))).isEmpty();
    assertThat(await(store.delete(first.id()))).isTrue();
    assertThat(
            session
                .execute(
                    "SELECT package_id FROM " + keyspace + ".profile_firmware WHERE profile_id = ?",
                    profile.value())
                .one()
                .getUuid(0))
        .isEqualTo(second.id().value());
  }

  private long claims(String table, OtaPackageId id) {
    return session
        .execute(
            "SELECT COUNT(*) FROM " + keyspace + "." + table + " WHERE package_id = ?", id.value())
        .one()
        .getLong(0);
  }

  @Test
  void should_keep_a_claim_its_owners_row_does_not_name_yet_when_a_delete_checks_the_package() {
    OtaPackageInfo pkg = uploaded(created("claimed-early"), bytes(10));
    DeviceId device = DeviceId.random();
    DeviceProfileId profile = DeviceProfileId.random();
    // Two assignments between their two writes: claimed, the owners' rows not written yet.
    session.execute(
        "INSERT INTO " + keyspace + ".ota_package_devices (package_id, device_id) VALUES (?, ?)",
        pkg.id().value(),
        device.value());
    session.execute(
        "INSERT INTO " + keyspace + ".ota_package_profiles (package_id, profile_id) VALUES (?, ?)",
        pkg.id().value(),
        profile.value());

    assertThat(await(store.assignedDevices(pkg.id(), 10))).isEmpty();
    assertThat(await(store.assignedProfiles(pkg.id(), 10))).isEmpty();
    assertThat(claims("ota_package_devices", pkg.id())).as("skipped, not removed").isEqualTo(1);
    assertThat(claims("ota_package_profiles", pkg.id())).as("skipped, not removed").isEqualTo(1);

    // The assignments' second writes: now the delete sees them.
    session.execute(
        "INSERT INTO " + keyspace + ".device_firmware (device_id, package_id) VALUES (?, ?)",
        device.value(),
        pkg.id().value());
    assertThat(failure(() -> await(store.delete(pkg.id()))))
        .isInstanceOf(OtaPackageConflictException.class)
        .hasMessageContaining(device.toString());
    await(store.unassign(device));
    session.execute(
        "INSERT INTO " + keyspace + ".profile_firmware (profile_id, package_id) VALUES (?, ?)",
        profile.value(),
        pkg.id().value());
    assertThat(failure(() -> await(store.delete(pkg.id()))))
        .isInstanceOf(OtaPackageConflictException.class)
        .hasMessageContaining(profile.toString());
    assertThat(claims("ota_package_devices", pkg.id())).isEqualTo(1);
  }

  @Test
  void should_remove_the_packages_claims_when_the_package_is_deleted() {
    OtaPackageInfo first = uploaded(created("claims-first"), bytes(10));
    OtaPackageInfo second = uploaded(created("claims-second"), bytes(10));
    DeviceId device = DeviceId.random();
    DeviceId other = DeviceId.random();
    DeviceProfileId profile = DeviceProfileId.random();
    await(store.assign(device, first.id()));
    await(store.assign(other, first.id()));
    await(store.assignToProfile(profile, first.id()));
    // Moved on and removed: their claims on the first stay until it is deleted.
    assertThat(await(store.assign(device, second.id()))).contains(first.id());
    assertThat(await(store.unassign(other))).contains(first.id());
    assertThat(await(store.assignToProfile(profile, second.id()))).contains(first.id());
    assertThat(claims("ota_package_devices", first.id())).isEqualTo(2);
    assertThat(claims("ota_package_profiles", first.id())).isEqualTo(1);

    assertThat(await(store.delete(first.id()))).isTrue();

    assertThat(claims("ota_package_devices", first.id())).isZero();
    assertThat(claims("ota_package_profiles", first.id())).isZero();
    assertThat(await(store.assignedDevices(second.id(), 10))).containsExactly(device);
    assertThat(await(store.assignedProfiles(second.id(), 10))).containsExactly(profile);
  }

  @Test
  void should_refuse_a_profile_assignment_when_the_package_does_not_exist() {
    DeviceProfileId profile = DeviceProfileId.random();
    OtaPackageId missing = OtaPackageId.random();

    assertThat(failure(() -> await(store.assignToProfile(profile, missing))))
        .isInstanceOf(OtaPackageConflictException.class);
    assertThat(await(store.profileAssignment(profile))).isEmpty();
    assertThat(await(store.assignedProfiles(missing, 10))).isEmpty();
  }
}
