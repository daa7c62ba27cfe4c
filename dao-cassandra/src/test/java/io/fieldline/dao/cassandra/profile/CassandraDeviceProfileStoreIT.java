package io.fieldline.dao.cassandra.profile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileDraft;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.DeviceProfilePageQuery;
import io.fieldline.common.profile.DeviceProfileStore.Deletion;
import io.fieldline.common.profile.ProvisionType;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.registry.CassandraDeviceRegistry;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The profile store against real Cassandra: unique names and keys, claims left by an interrupted
 * write, the secret kept as a hash, and a device's profile against deletes of devices and profiles.
 */
class CassandraDeviceProfileStoreIT extends CassandraTestBase {

  private CassandraDeviceRegistry devices;
  private CassandraDeviceProfileStore profiles;

  @Override
  protected String extraConfig() {
    return "fieldline.cassandra.password-hashing.cost = 4";
  }

  @BeforeAll
  void createStores() {
    devices = new CassandraDeviceRegistry(session, config);
    profiles = (CassandraDeviceProfileStore) devices.deviceProfiles();
  }

  @AfterAll
  void closeStores() {
    devices.close();
  }

  @BeforeEach
  void cleanTables() {
    truncate(
        "devices",
        "device_by_token",
        "device_by_name",
        "device_by_credentials",
        "device_profiles",
        "device_profile_by_name",
        "device_profile_by_key",
        "device_profile_default",
        "devices_by_profile");
  }

  private static DeviceProfileDraft draft(String name, String key, String secret) {
    return new DeviceProfileDraft(
        name,
        "DEFAULT",
        "MQTT",
        key == null ? ProvisionType.DISABLED : ProvisionType.ALLOW_CREATE_NEW_DEVICES,
        key,
        secret,
        null,
        false);
  }

  private static Throwable failureOf(CompletionStage<?> stage) {
    try {
      stage.toCompletableFuture().join();
      throw new AssertionError("expected a failure");
    } catch (CompletionException e) {
      return e.getCause();
    }
  }

  @Test
  void should_find_a_profile_by_its_key_and_match_only_its_secret_when_created() {
    DeviceProfile created = await(profiles.create(draft("meters", "meter-key", "meter-secret")));

    DeviceProfile found = await(profiles.findByProvisionKey("meter-key")).orElseThrow();

    assertThat(found.id()).isEqualTo(created.id());
    assertThat(found.admitsProvisioning("meter-secret")).isTrue();
    assertThat(found.admitsProvisioning("meter-secreT")).isFalse();
    assertThat(await(profiles.findByProvisionKey("other-key"))).isEmpty();
  }

  @Test
  void should_refuse_a_taken_name_or_key_and_release_what_the_refused_create_reserved() {
    await(profiles.create(draft("a", "key-a", "s")));

    assertThat(failureOf(profiles.create(draft("a", "key-b", "s"))))
        .isInstanceOf(DeviceConflictException.class);
    assertThat(failureOf(profiles.create(draft("b", "key-a", "s"))))
        .isInstanceOf(DeviceConflictException.class)
        .hasMessageContaining("provisionDeviceKey");
    // "b" was reserved by the refused create and released again; "key-b" was never reserved.
    assertThat(await(profiles.create(draft("b", "key-b", "s"))).name()).isEqualTo("b");
  }

  @Test
  void should_take_over_a_claim_no_profile_holds_when_a_crash_left_it() {
    UUID ghost = UUID.randomUUID();
    session.execute(
        "INSERT INTO "
            + keyspace
            + ".device_profile_by_name (name, profile_id) VALUES ('left-behind', ?)",
        ghost);
    session.execute(
        "INSERT INTO "
            + keyspace
            + ".device_profile_by_key (provision_key, profile_id) VALUES ('left-key', ?)",
        ghost);

    DeviceProfile created = await(profiles.create(draft("left-behind", "left-key", "s")));

    assertThat(await(profiles.findByProvisionKey("left-key")).map(DeviceProfile::id))
        .contains(created.id());
  }

  @Test
  void should_keep_the_secret_and_free_the_old_name_and_key_when_updated() {
    DeviceProfile created = await(profiles.create(draft("old", "old-key", "kept-secret")));

    DeviceProfile updated =
        await(profiles.update(created.id(), draft("new", "new-key", null))).orElseThrow();

    assertThat(updated.admitsProvisioning("kept-secret")).isTrue();
    assertThat(await(profiles.findByProvisionKey("old-key"))).isEmpty();
    assertThat(await(profiles.findByProvisionKey("new-key")).map(DeviceProfile::name))
        .contains("new");
    assertThat(await(profiles.create(draft("old", "old-key", "s"))).name()).isEqualTo("old");
    assertThat(await(profiles.update(DeviceProfileId.random(), draft("x", null, null)))).isEmpty();
  }

  @Test
  void should_page_and_search_the_profiles_in_the_asked_order() {
    for (String name : List.of("p-3", "p-1", "q-9", "p-2")) {
      await(profiles.create(draft(name, null, null)));
    }

    PageData<DeviceProfile> page =
        await(
            profiles.page(
                new DeviceProfilePageQuery(
                    2,
                    0,
                    Optional.of("P-"),
                    DeviceProfilePageQuery.SortProperty.NAME,
                    SortOrder.DESC)));

    assertThat(page.data()).extracting(DeviceProfile::name).containsExactly("p-3", "p-2");
    assertThat(page.totalElements()).isEqualTo(3);
    assertThat(page.hasNext()).isTrue();
  }

  @Test
  void should_refuse_to_delete_a_profile_a_device_has_until_the_device_is_gone() {
    DeviceProfile profile = await(profiles.create(draft("used", null, null)));
    Device device = await(devices.create("user", "t", Optional.empty()));
    assertThat(await(profiles.assign(device.id(), profile.id()))).isTrue();

    assertThat(await(profiles.delete(profile.id()))).isEqualTo(Deletion.IN_USE);
    assertThat(await(profiles.profileOf(device.id()))).contains(profile.id());

    await(devices.delete(device.id()));
    // The device's claim on the profile is stale now: the delete finds it so and goes on.
    assertThat(await(profiles.delete(profile.id()))).isEqualTo(Deletion.DELETED);
    assertThat(await(profiles.findById(profile.id()))).isEmpty();
    assertThat(
            session
                .execute(
                    "SELECT count(*) FROM " + keyspace + ".devices_by_profile WHERE profile_id = ?",
                    profile.id().value())
                .one()
                .getLong(0))
        .isZero();
  }

  @Test
  void should_not_bring_a_deleted_device_back_when_it_is_given_a_profile() {
    DeviceProfile profile = await(profiles.create(draft("p", null, null)));
    DeviceId gone = DeviceId.random();

    assertThat(await(profiles.assign(gone, profile.id()))).isFalse();

    assertThat(
            session
                .execute("SELECT * FROM " + keyspace + ".devices WHERE id = ?", gone.value())
                .one())
        .isNull();
  }

  @Test
  void should_refuse_an_assignment_and_keep_the_old_profile_when_the_profile_is_being_deleted() {
    DeviceProfile first = await(profiles.create(draft("first", null, null)));
    DeviceProfile dying = await(profiles.create(draft("dying", null, null)));
    Device device = await(devices.create("mover", "t", Optional.empty()));
    await(profiles.assign(device.id(), first.id()));
    // What a delete leaves while it checks the profile's devices.
    session.execute(
        "UPDATE " + keyspace + ".device_profiles SET deleting = true WHERE id = ?",
        dying.id().value());

    assertThat(failureOf(profiles.assign(device.id(), dying.id())))
        .isInstanceOf(IllegalArgumentException.class);

    assertThat(await(profiles.profileOf(device.id()))).contains(first.id());
  }

  @Test
  void should_move_a_device_and_read_the_profiles_of_many_when_assigned() {
    DeviceProfile a = await(profiles.create(draft("a", null, null)));
    DeviceProfile b = await(profiles.create(draft("b", null, null)));
    Device one = await(devices.create("one", "t", Optional.empty()));
    Device two = await(devices.create("two", "t", Optional.empty()));
    Device none = await(devices.create("none", "t", Optional.empty()));

    await(profiles.assign(one.id(), a.id()));
    await(profiles.assign(two.id(), a.id()));
    await(profiles.assign(two.id(), b.id()));

    Map<DeviceId, DeviceProfileId> found =
        await(profiles.profilesOf(List.of(one.id(), two.id(), none.id())));
    assertThat(found).containsOnly(Map.entry(one.id(), a.id()), Map.entry(two.id(), b.id()));
    // The moved device no longer keeps "a" from being deleted once "one" has another profile.
    await(profiles.assign(one.id(), b.id()));
    assertThat(await(profiles.delete(a.id()))).isEqualTo(Deletion.DELETED);
  }

  @Test
  void should_list_only_the_devices_that_still_have_the_profile_when_asked_for_its_devices() {
    DeviceProfile a = await(profiles.create(draft("fleet-a", null, null)));
    DeviceProfile b = await(profiles.create(draft("fleet-b", null, null)));
    Device stays = await(devices.create("stays", "t", Optional.empty()));
    Device moved = await(devices.create("moved", "t", Optional.empty()));
    Device deleted = await(devices.create("deleted", "t", Optional.empty()));
    for (Device device : List.of(stays, moved, deleted)) {
      await(profiles.assign(device.id(), a.id()));
    }
    // Listed under "a" by hand as a move that stopped half-way would leave it.
    await(profiles.assign(moved.id(), b.id()));
    session.execute(
        "INSERT INTO " + keyspace + ".devices_by_profile (profile_id, device_id) VALUES (?, ?)",
        a.id().value(),
        moved.id().value());
    await(devices.delete(deleted.id()));

    assertThat(await(profiles.devices(a.id()))).containsExactly(stays.id());
    assertThat(await(profiles.devices(b.id()))).containsExactly(moved.id());
    assertThat(
            session
                .execute(
                    "SELECT device_id FROM "
                        + keyspace
                        + ".devices_by_profile WHERE profile_id = ?",
                    a.id().value())
                .all())
        .as("listings not confirmed are skipped, not removed")
        .hasSize(3);
    assertThat(await(profiles.devices(DeviceProfileId.random()))).isEmpty();
  }

  @Test
  void should_keep_a_listing_its_row_does_not_confirm_yet_when_the_profiles_devices_are_read() {
    DeviceProfile profile = await(profiles.create(draft("fleet-late", null, null)));
    Device device = await(devices.create("late", "t", Optional.empty()));
    // An assignment between its two writes: listed, its row not yet written.
    session.execute(
        "INSERT INTO " + keyspace + ".devices_by_profile (profile_id, device_id) VALUES (?, ?)",
        profile.id().value(),
        device.id().value());

    assertThat(await(profiles.devices(profile.id()))).as("not confirmed yet").isEmpty();

    session.execute(
        "UPDATE " + keyspace + ".devices SET device_profile_id = ? WHERE id = ?",
        profile.id().value(),
        device.id().value());
    assertThat(await(profiles.devices(profile.id())))
        .as("still listed once its row is written")
        .containsExactly(device.id());
  }

  @Test
  void should_keep_one_default_profile_and_refuse_to_delete_it() {
    DeviceProfile first = await(profiles.create(draft("first", null, null)));
    DeviceProfileDraft makeDefault =
        new DeviceProfileDraft(
            "second", "DEFAULT", "MQTT", ProvisionType.DISABLED, null, null, null, true);
    DeviceProfile second = await(profiles.create(makeDefault));

    assertThat(second.isDefault()).isTrue();
    assertThat(await(profiles.findById(first.id())).orElseThrow().isDefault()).isFalse();
    assertThat(await(profiles.delete(second.id()))).isEqualTo(Deletion.DEFAULT);
    assertThat(await(profiles.delete(DeviceProfileId.random()))).isEqualTo(Deletion.NOT_FOUND);
  }
}
