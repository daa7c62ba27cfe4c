package io.fieldline.fleet.ota;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.common.ota.OtaPackageType;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.fleet.ota.OtaMetrics.Change;
import io.fieldline.fleet.ota.OtaMetrics.Sync;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A device's firmware ({@code firmwareId}), ThingsBoard's way: assigning a package stores the
 * assignment, then sets the device's shared attributes {@code fw_title}, {@code fw_version}, {@code
 * fw_size}, {@code fw_checksum_algorithm}, {@code fw_checksum} (and {@code fw_tag} when the package
 * has a tag) through the path REST attribute writes take — stored through {@link TelemetryStore},
 * then published as {@link DeviceEvent.AttributesUpdated} on {@link DeviceEvents}, so that the
 * device's MQTT session (on whichever node) pushes them to a device subscribed to {@code
 * v1/devices/me/attributes}, and its HTTP long polls answer. Removing the assignment deletes those
 * attributes the same way ({@link DeviceEvent.AttributesDeleted}).
 *
 * <p><b>A device profile's firmware</b> is what its devices without their own get: a device's
 * firmware (what it downloads, what its {@code fw_*} attributes describe) is its own, else its
 * profile's. So a change of a profile's firmware is followed by a <em>fan-out</em>: every device of
 * the profile ({@link DeviceProfileStore#devices}) is brought up to date ({@link #sync}) in the
 * background once the assignment is stored, within the bounds of {@link ProfileFanOuts} (at most
 * {@value ProfileFanOuts#PARALLELISM} syncs in flight on the node, one fan-out running and one
 * pending per profile, a failed one tried again). Bringing a device up to date reads its firmware
 * as it is then and its {@code fw_*} attributes, and writes (or deletes) them only where they
 * differ, so it is harmless to repeat and a device with its own firmware is left as it is. Having
 * written, it reads the device's firmware again and starts over if it changed meanwhile (at most
 * {@value #SYNC_ROUNDS} rounds): attribute writes are last-writer-wins whatever the writer read, so
 * a sync that read older firmware and wrote last would otherwise leave stale attributes. Syncs of
 * one device run one after the other on this node. A device given the profile while a fan-out runs
 * is brought up to date by whoever gives it the profile (the device save, provisioning: they call
 * {@link #sync} once the device has the profile); the fan-out lists the profile's devices only
 * after the profile's new firmware is stored, so of the two at least one reads the new firmware.
 *
 * <p>Only a {@link OtaPackageType#FIRMWARE} package with data can be assigned (ThingsBoard refuses
 * the others too), and to a profile only a package meant for that profile or for none ({@code
 * deviceProfileId}, ThingsBoard's rule). Deleting a package first forgets the assignments of
 * devices and profiles that no longer exist (their deletes do not touch them), then asks the store,
 * which refuses while a device or a profile is assigned it.
 *
 * <p>Thread-safe; stages complete on the storage's threads.
 */
public final class FirmwareAssignments {

  private static final Logger LOG = LoggerFactory.getLogger(FirmwareAssignments.class);

  /** The shared attributes an assignment sets. */
  static final Set<String> ATTRIBUTES =
      Set.of("fw_title", "fw_version", "fw_tag", "fw_size", "fw_checksum_algorithm", "fw_checksum");

  /** Rounds a sync makes at most while the device's firmware keeps changing under it. */
  static final int SYNC_ROUNDS = 3;

  private static final int DELETE_CHECK_BATCH = 100;

  private final OtaPackageStore store;
  private final DeviceRegistry registry;
  private final DeviceProfileStore profiles;
  private final TelemetryStore telemetry;
  private final TelemetryQueries queries;
  private final DeviceEvents events;
  private final OtaMetrics metrics;
  private final LongSupplier clock;
  private final ProfileFanOuts fanOuts;
  // The last sync of each device on this node still running: the next one starts after it.
  private final ConcurrentMap<DeviceId, CompletableFuture<Void>> syncing =
      new ConcurrentHashMap<>();

  FirmwareAssignments(
      OtaPackageStore store,
      DeviceRegistry registry,
      DeviceProfileStore profiles,
      TelemetryStore telemetry,
      TelemetryQueries queries,
      DeviceEvents events,
      OtaMetrics metrics,
      LongSupplier clock) {
    this.store = store;
    this.registry = registry;
    this.profiles = profiles;
    this.telemetry = telemetry;
    this.queries = queries;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
    this.fanOuts =
        new ProfileFanOuts(profiles::devices, this::sync, ProfileFanOuts.FIRST_RETRY_MILLIS);
  }

  /**
   * The package {@code id} if a device may be assigned it: it exists, is firmware and has data.
   * Fails with {@link IllegalArgumentException} (400) saying why not.
   */
  public CompletionStage<OtaPackageInfo> assignable(OtaPackageId id) {
    return store
        .find(id)
        .thenApply(
            found -> {
              OtaPackageInfo firmware =
                  found.orElseThrow(
                      () -> new IllegalArgumentException("no OTA package " + id + " exists"));
              if (firmware.type() != OtaPackageType.FIRMWARE) {
                throw new IllegalArgumentException(
                    "OTA package " + id + " is " + firmware.type() + ", not FIRMWARE");
              }
              if (!firmware.hasData()) {
                throw new IllegalArgumentException(
                    "OTA package " + id + " has no data yet: upload its file first");
              }
              return firmware;
            });
  }

  /**
   * The package {@code id} if device profile {@code profile} may be assigned it: as {@link
   * #assignable}, and meant for that profile or for none (its {@code deviceProfileId}); {@code
   * profile} null stands for a profile not created yet, which only a package meant for none fits.
   * Fails with {@link IllegalArgumentException} (400) saying why not.
   */
  public CompletionStage<OtaPackageInfo> assignableTo(
      OtaPackageId id, @Nullable DeviceProfileId profile) {
    return assignable(id)
        .thenApply(
            firmware -> {
              if (firmware.deviceProfileId() != null
                  && (profile == null || !firmware.deviceProfileId().equals(profile.value()))) {
                throw new IllegalArgumentException(
                    "OTA package "
                        + id
                        + " is meant for device profile "
                        + firmware.deviceProfileId()
                        + ", not this one");
              }
              return firmware;
            });
  }

  /**
   * Assigns {@code firmware} to the device (empty: removes its firmware), then brings its {@code
   * fw_*} shared attributes up to date ({@link #sync}), pushed to the device: they describe its own
   * firmware, else its profile's, or are deleted when it has none. The device must exist (checked
   * by the caller).
   *
   * @return the package assigned now, if any
   */
  public CompletionStage<Optional<OtaPackageInfo>> set(
      DeviceId device, Optional<OtaPackageId> firmware) {
    if (firmware.isEmpty()) {
      return store
          .unassign(device)
          .thenCompose(
              before -> {
                if (before.isPresent()) {
                  metrics.assignment(Change.UNASSIGNED);
                }
                return sync(device).thenApply(synced -> Optional.empty());
              });
    }
    return assignable(firmware.get())
        .thenCompose(
            info ->
                store
                    .assign(device, info.id())
                    .thenApply(
                        before -> {
                          metrics.assignment(Change.ASSIGNED);
                          return before;
                        })
                    .thenCompose(before -> sync(device))
                    .thenApply(synced -> Optional.of(info)));
  }

  /** The package assigned to the device itself as its firmware, if any. */
  public CompletionStage<Optional<OtaPackageId>> of(DeviceId device) {
    return store.assignment(device);
  }

  /** The package assigned to the device profile as its firmware, if any. */
  public CompletionStage<Optional<OtaPackageId>> ofProfile(DeviceProfileId profile) {
    return store.profileAssignment(profile);
  }

  /**
   * Assigns {@code firmware} to the device profile (empty: removes its firmware). Completes once
   * the assignment is stored; when it changed, the profile's devices are then brought up to date in
   * the background (the fan-out, described above). The profile must exist and the package have
   * passed {@link #assignableTo} (checked by the caller before it saved the profile).
   *
   * @return the package assigned now, if any
   */
  public CompletionStage<Optional<OtaPackageInfo>> setForProfile(
      DeviceProfileId profile, Optional<OtaPackageId> firmware) {
    if (firmware.isEmpty()) {
      return store
          .unassignProfile(profile)
          .thenApply(
              before -> {
                if (before.isPresent()) {
                  metrics.assignment(Change.UNASSIGNED);
                }
                if (before.isPresent() || fanOuts.lastFailed(profile)) {
                  fanOuts.request(profile, "removed");
                }
                return Optional.empty();
              });
    }
    return assignableTo(firmware.get(), profile)
        .thenCompose(
            info ->
                store
                    .assignToProfile(profile, info.id())
                    .thenApply(
                        before -> {
                          boolean changed = !before.equals(Optional.of(info.id()));
                          if (changed) {
                            metrics.assignment(Change.ASSIGNED);
                          }
                          // The same firmware again starts a fan-out if the last one failed.
                          if (changed || fanOuts.lastFailed(profile)) {
                            fanOuts.request(profile, info.title() + " " + info.version());
                          }
                          return Optional.of(info);
                        }));
  }

  /** After the profile was deleted (no device had it): its firmware assignment goes too. */
  public CompletionStage<Void> forgetProfile(DeviceProfileId profile) {
    fanOuts.forget(profile);
    return store.unassignProfile(profile).thenApply(before -> null);
  }

  /**
   * Brings the device's {@code fw_*} shared attributes up to date with its firmware (its own, else
   * its profile's): written where they differ, deleted when it has none, pushed to the device;
   * nothing is written when they already describe it. Runs after the device's syncs started before
   * on this node; having written, checks that the firmware did not change meanwhile (else starts
   * over, at most {@value #SYNC_ROUNDS} rounds). For whoever changes what a device's firmware is:
   * {@link #set}, giving it another profile, provisioning it with one, the fan-outs.
   */
  public CompletionStage<Void> sync(DeviceId device) {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> before = syncing.put(device, mine);
    CompletableFuture<Void> start =
        before == null ? CompletableFuture.completedFuture(null) : before;
    CompletableFuture<Void> synced =
        start
            .thenCompose(previous -> syncRound(device, 1))
            .whenComplete(
                (done, error) -> {
                  if (error != null) {
                    metrics.sync(Sync.FAILED);
                  }
                  syncing.remove(device, mine);
                  mine.complete(null);
                });
    return synced;
  }

  private CompletionStage<Optional<OtaPackageInfo>> firmwareOf(DeviceId device) {
    return store
        .assignedFirmware(device)
        .thenApply(found -> found.filter(p -> p.type() == OtaPackageType.FIRMWARE && p.hasData()));
  }

  private CompletionStage<Void> syncRound(DeviceId device, int round) {
    return firmwareOf(device)
        .thenCompose(
            firmware ->
                queries
                    .attributes(device, AttributeScope.SHARED_SCOPE, Optional.of(ATTRIBUTES))
                    .thenCompose(current -> reconcile(device, firmware, current))
                    .thenCompose(
                        wrote ->
                            !wrote
                                ? CompletableFuture.<Void>completedFuture(null)
                                : firmwareOf(device)
                                    .thenCompose(now -> recheck(device, round, firmware, now))));
  }

  // After a write: the firmware read again is what was written, or the sync goes round again.
  private CompletionStage<Void> recheck(
      DeviceId device, int round, Optional<OtaPackageInfo> written, Optional<OtaPackageInfo> now) {
    if (now.map(OtaPackageInfo::id).equals(written.map(OtaPackageInfo::id))) {
      return CompletableFuture.completedFuture(null);
    }
    if (round < SYNC_ROUNDS) {
      return syncRound(device, round + 1);
    }
    metrics.sync(Sync.FAILED);
    LOG.warn(
        "[device|{}] its firmware changed during each of {} rounds of bringing its fw_* attributes"
            + " up to date: they may not describe it until its next change",
        device,
        SYNC_ROUNDS);
    return CompletableFuture.completedFuture(null);
  }

  // Whether it wrote (or deleted) attributes.
  private CompletionStage<Boolean> reconcile(
      DeviceId device, Optional<OtaPackageInfo> firmware, List<AttributeKvEntry> current) {
    Set<KvEntry> now = new HashSet<>();
    current.forEach(attribute -> now.add(attribute.kv()));
    if (firmware.isEmpty()) {
      if (now.isEmpty()) {
        metrics.sync(Sync.UNCHANGED);
        return CompletableFuture.completedFuture(false);
      }
      metrics.sync(Sync.UPDATED);
      return deleteAttributes(device).thenApply(done -> true);
    }
    if (now.equals(Set.copyOf(entries(firmware.get())))) {
      metrics.sync(Sync.UNCHANGED);
      return CompletableFuture.completedFuture(false);
    }
    metrics.sync(Sync.UPDATED);
    return writeAttributes(device, firmware.get()).thenApply(done -> true);
  }

  /**
   * Deletes a package: completes with false when there is none, fails with {@code
   * OtaPackageConflictException} while an existing device or device profile is assigned it.
   */
  public CompletionStage<Boolean> deletePackage(OtaPackageId id) {
    return forgetDeletedDevices(id)
        .thenCompose(done -> forgetDeletedProfiles(id))
        .thenCompose(done -> store.delete(id));
  }

  // The assignments of profiles deleted since (a delete that stopped before forgetProfile).
  private CompletionStage<Void> forgetDeletedProfiles(OtaPackageId id) {
    return store
        .assignedProfiles(id, DELETE_CHECK_BATCH)
        .thenCompose(
            assigned -> {
              CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
              for (DeviceProfileId profile : assigned) {
                chain =
                    chain.thenCompose(
                        done ->
                            profiles
                                .findById(profile)
                                .thenCompose(
                                    found ->
                                        found.isPresent()
                                            ? CompletableFuture.completedFuture(null)
                                            : forgetProfile(profile)));
              }
              return chain;
            });
  }

  // The assignments of devices deleted since: removed, so that they do not hold the package.
  private CompletionStage<Void> forgetDeletedDevices(OtaPackageId id) {
    return store
        .assignedDevices(id, DELETE_CHECK_BATCH)
        .thenCompose(
            devices -> {
              CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
              for (DeviceId device : devices) {
                chain =
                    chain.thenCompose(
                        done ->
                            registry
                                .findById(device)
                                .thenCompose(
                                    found ->
                                        found.isPresent()
                                            ? CompletableFuture.completedFuture(null)
                                            : store.unassign(device).thenApply(gone -> null)));
              }
              return chain;
            });
  }

  // The fw_* attributes describing a package with data.
  private static List<KvEntry> entries(OtaPackageInfo firmware) {
    OtaPackageData data = Objects.requireNonNull(firmware.data(), "data");
    List<KvEntry> entries = new ArrayList<>();
    entries.add(KvEntry.of("fw_title", firmware.title()));
    entries.add(KvEntry.of("fw_version", firmware.version()));
    if (firmware.tag() != null) {
      entries.add(KvEntry.of("fw_tag", firmware.tag()));
    }
    entries.add(KvEntry.of("fw_size", data.size()));
    entries.add(KvEntry.of("fw_checksum_algorithm", data.checksumAlgorithm().name()));
    entries.add(KvEntry.of("fw_checksum", data.checksum()));
    return entries;
  }

  private CompletionStage<Void> deleteAttributes(DeviceId device) {
    return telemetry
        .deleteAttributes(device, AttributeScope.SHARED_SCOPE, ATTRIBUTES)
        .thenAccept(
            deleted ->
                publish(
                    new DeviceEvent.AttributesDeleted(
                        device, AttributeScope.SHARED_SCOPE, List.copyOf(ATTRIBUTES))));
  }

  private CompletionStage<Void> writeAttributes(DeviceId device, OtaPackageInfo firmware) {
    if (firmware.data() == null) {
      return CompletableFuture.failedFuture(
          new NoSuchElementException("OTA package " + firmware.id() + " lost its data"));
    }
    List<KvEntry> entries = entries(firmware);
    long now = clock.getAsLong();
    CompletionStage<Void> written =
        telemetry
            .writeAttributes(device, AttributeScope.SHARED_SCOPE, entries, now)
            .thenAccept(
                stored -> {
                  List<AttributeKvEntry> updated = new ArrayList<>(entries.size());
                  entries.forEach(kv -> updated.add(new AttributeKvEntry(now, kv)));
                  publish(
                      new DeviceEvent.AttributesUpdated(
                          device, AttributeScope.SHARED_SCOPE, updated));
                });
    if (firmware.tag() != null) {
      return written;
    }
    // A tag left by the package assigned before is not this one's.
    return written.thenCompose(
        done ->
            telemetry
                .deleteAttributes(device, AttributeScope.SHARED_SCOPE, Set.of("fw_tag"))
                .thenAccept(
                    deleted ->
                        publish(
                            new DeviceEvent.AttributesDeleted(
                                device, AttributeScope.SHARED_SCOPE, List.of("fw_tag")))));
  }

  // Handed off, not awaited, as the REST attribute writes do: the change is stored whatever
  // becomes of its event.
  private void publish(DeviceEvent event) {
    try {
      events
          .publish(event)
          .whenComplete(
              (took, error) -> {
                if (error != null) {
                  logPublishFailure(event, error);
                }
              });
    } catch (RuntimeException e) {
      logPublishFailure(event, e);
    }
  }

  private static void logPublishFailure(DeviceEvent event, Throwable error) {
    LOG.warn(
        "[device|{}] firmware attributes stored, but publishing {} failed",
        event.deviceId(),
        event.getClass().getSimpleName(),
        error);
  }
}
