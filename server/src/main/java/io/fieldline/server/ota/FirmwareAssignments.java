package io.fieldline.server.ota;

import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TelemetryStore;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.common.ota.OtaPackageType;
import io.fieldline.server.ota.OtaMetrics.Change;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
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
 * <p>Only a {@link OtaPackageType#FIRMWARE} package with data can be assigned (ThingsBoard refuses
 * the others too). Deleting a package first forgets the assignments of devices that no longer exist
 * (a device's delete does not touch them), then asks the store, which refuses while a device is
 * assigned it.
 *
 * <p>Thread-safe; stages complete on the storage's threads.
 */
public final class FirmwareAssignments {

  private static final Logger LOG = LoggerFactory.getLogger(FirmwareAssignments.class);

  /** The shared attributes an assignment sets. */
  static final Set<String> ATTRIBUTES =
      Set.of("fw_title", "fw_version", "fw_tag", "fw_size", "fw_checksum_algorithm", "fw_checksum");

  private static final int DELETE_CHECK_BATCH = 100;

  private final OtaPackageStore store;
  private final DeviceRegistry registry;
  private final TelemetryStore telemetry;
  private final DeviceEvents events;
  private final OtaMetrics metrics;
  private final LongSupplier clock;

  FirmwareAssignments(
      OtaPackageStore store,
      DeviceRegistry registry,
      TelemetryStore telemetry,
      DeviceEvents events,
      OtaMetrics metrics,
      LongSupplier clock) {
    this.store = store;
    this.registry = registry;
    this.telemetry = telemetry;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
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
   * Assigns {@code firmware} to the device (empty: removes its firmware), and sets (or deletes) its
   * {@code fw_*} shared attributes, pushed to the device. The device must exist (checked by the
   * caller).
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
                if (before.isEmpty()) {
                  return CompletableFuture.completedFuture(Optional.empty());
                }
                metrics.assignment(Change.UNASSIGNED);
                return telemetry
                    .deleteAttributes(device, AttributeScope.SHARED_SCOPE, ATTRIBUTES)
                    .thenApply(
                        deleted -> {
                          publish(
                              new DeviceEvent.AttributesDeleted(
                                  device, AttributeScope.SHARED_SCOPE, List.copyOf(ATTRIBUTES)));
                          return Optional.empty();
                        });
              });
    }
    return assignable(firmware.get())
        .thenCompose(
            info ->
                store
                    .assign(device, info.id())
                    .thenCompose(before -> writeAttributes(device, info))
                    .thenApply(
                        written -> {
                          metrics.assignment(Change.ASSIGNED);
                          return Optional.of(info);
                        }));
  }

  /** The package assigned to the device as its firmware, if any. */
  public CompletionStage<Optional<OtaPackageId>> of(DeviceId device) {
    return store.assignment(device);
  }

  /**
   * Deletes a package: completes with false when there is none, fails with {@code
   * OtaPackageConflictException} while an existing device is assigned it.
   */
  public CompletionStage<Boolean> deletePackage(OtaPackageId id) {
    return forgetDeletedDevices(id).thenCompose(done -> store.delete(id));
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

  private CompletionStage<Void> writeAttributes(DeviceId device, OtaPackageInfo firmware) {
    OtaPackageData data = firmware.data();
    if (data == null) {
      return CompletableFuture.failedFuture(
          new NoSuchElementException("OTA package " + firmware.id() + " lost its data"));
    }
    List<KvEntry> entries = new ArrayList<>();
    entries.add(KvEntry.of("fw_title", firmware.title()));
    entries.add(KvEntry.of("fw_version", firmware.version()));
    if (firmware.tag() != null) {
      entries.add(KvEntry.of("fw_tag", firmware.tag()));
    }
    entries.add(KvEntry.of("fw_size", data.size()));
    entries.add(KvEntry.of("fw_checksum_algorithm", data.checksumAlgorithm().name()));
    entries.add(KvEntry.of("fw_checksum", data.checksum()));
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
