package io.fieldline.common.profile;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.query.PageData;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Device profiles, and which profile each device has. Names and provision keys are unique: a create
 * or an update that would take another profile's fails with {@link DeviceConflictException}. Every
 * method is asynchronous and never blocks the caller; invalid input fails with {@link
 * IllegalArgumentException}, storage trouble with {@link io.fieldline.common.StoreException}.
 */
public interface DeviceProfileStore {

  /** What {@link #delete} did. */
  enum Deletion {
    DELETED,
    /** There is no such profile. */
    NOT_FOUND,
    /** Devices have the profile: refused, as ThingsBoard refuses it. */
    IN_USE,
    /** It is the default profile: refused, as ThingsBoard refuses it. */
    DEFAULT
  }

  /**
   * Creates a profile. A profile that provisions needs a secret ({@link
   * DeviceProfileDraft#provisionDeviceSecret}).
   *
   * @return the stored profile
   */
  CompletionStage<DeviceProfile> create(DeviceProfileDraft draft);

  /**
   * Replaces a profile's fields with the draft's; its id and creation time stay, and so does its
   * secret when the draft's is null.
   *
   * @return the stored profile, empty when there is no such profile
   */
  CompletionStage<Optional<DeviceProfile>> update(DeviceProfileId id, DeviceProfileDraft draft);

  CompletionStage<Optional<DeviceProfile>> findById(DeviceProfileId id);

  /** The profile whose provision key is {@code provisionDeviceKey}, whatever its provision type. */
  CompletionStage<Optional<DeviceProfile>> findByProvisionKey(String provisionDeviceKey);

  /** One page of the profiles matching the query, in its order, with the listing's totals. */
  CompletionStage<PageData<DeviceProfile>> page(DeviceProfilePageQuery query);

  /** Deletes a profile no device has and that is not the default one. */
  CompletionStage<Deletion> delete(DeviceProfileId id);

  /**
   * Gives the device the profile (in place of the one it has, if any).
   *
   * @return false when there is no such device; fails with {@link IllegalArgumentException} when
   *     there is no such profile (or it is being deleted)
   */
  CompletionStage<Boolean> assign(DeviceId device, DeviceProfileId profile);

  /** The device's profile; empty when it has none, or there is no such device. */
  CompletionStage<Optional<DeviceProfileId>> profileOf(DeviceId device);

  /** The profiles of {@code devices} that have one (devices without one are left out). */
  CompletionStage<Map<DeviceId, DeviceProfileId>> profilesOf(Collection<DeviceId> devices);

  /**
   * Every device that has the profile, in no particular order: held in memory whole (about 60 bytes
   * a device), read in chunks of devices, each confirmed by the device's own row. Listings not
   * confirmed are skipped, never removed (an assignment may be between its two writes).
   */
  CompletionStage<List<DeviceId>> devices(DeviceProfileId profile);
}
