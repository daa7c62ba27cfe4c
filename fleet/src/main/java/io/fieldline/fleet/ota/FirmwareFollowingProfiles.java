package io.fieldline.fleet.ota;

import io.fieldline.common.DeviceId;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileDraft;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.DeviceProfilePageQuery;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.query.PageData;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DeviceProfileStore} whose {@link #assign} also brings the device's {@code fw_*}
 * attributes up to date with its new profile's firmware ({@link FirmwareAssignments#sync}), for the
 * callers that give devices a profile without knowing about firmware: provisioning. The
 * assignment's answer waits for that; a failure of it is logged and does not fail the assignment
 * (the device has its profile, and its downloads serve the profile's firmware whatever its
 * attributes say). Everything else is the delegate's. Thread-safe.
 */
final class FirmwareFollowingProfiles implements DeviceProfileStore {

  private static final Logger LOG = LoggerFactory.getLogger(FirmwareFollowingProfiles.class);

  private final DeviceProfileStore delegate;
  private final FirmwareAssignments firmware;

  FirmwareFollowingProfiles(DeviceProfileStore delegate, FirmwareAssignments firmware) {
    this.delegate = delegate;
    this.firmware = firmware;
  }

  @Override
  public CompletionStage<Boolean> assign(DeviceId device, DeviceProfileId profile) {
    return delegate
        .assign(device, profile)
        .thenCompose(
            assigned ->
                !assigned
                    ? CompletableFuture.completedFuture(false)
                    : firmware
                        .sync(device)
                        .handle(
                            (synced, error) -> {
                              if (error != null) {
                                LOG.warn(
                                    "[device|{}] given profile {}, but its fw_* attributes were"
                                        + " not brought up to date with the profile's firmware",
                                    device,
                                    profile,
                                    error);
                              }
                              return true;
                            }));
  }

  @Override
  public CompletionStage<DeviceProfile> create(DeviceProfileDraft draft) {
    return delegate.create(draft);
  }

  @Override
  public CompletionStage<Optional<DeviceProfile>> update(
      DeviceProfileId id, DeviceProfileDraft draft) {
    return delegate.update(id, draft);
  }

  @Override
  public CompletionStage<Optional<DeviceProfile>> findById(DeviceProfileId id) {
    return delegate.findById(id);
  }

  @Override
  public CompletionStage<Optional<DeviceProfile>> findByProvisionKey(String provisionDeviceKey) {
    return delegate.findByProvisionKey(provisionDeviceKey);
  }

  @Override
  public CompletionStage<PageData<DeviceProfile>> page(DeviceProfilePageQuery query) {
    return delegate.page(query);
  }

  @Override
  public CompletionStage<Deletion> delete(DeviceProfileId id) {
    return delegate.delete(id);
  }

  @Override
  public CompletionStage<Optional<DeviceProfileId>> profileOf(DeviceId device) {
    return delegate.profileOf(device);
  }

  @Override
  public CompletionStage<Map<DeviceId, DeviceProfileId>> profilesOf(Collection<DeviceId> devices) {
    return delegate.profilesOf(devices);
  }

  @Override
  public CompletionStage<List<DeviceId>> devices(DeviceProfileId profile) {
    return delegate.devices(profile);
  }
}
