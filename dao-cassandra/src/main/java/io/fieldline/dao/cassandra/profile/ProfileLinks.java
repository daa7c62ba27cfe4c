package io.fieldline.dao.cassandra.profile;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Which profile each device has: the truth is {@code devices.device_profile_id} (the device's own
 * row, written only if the row exists, so a deleted device is never brought back as a nameless
 * row); {@code devices_by_profile} lists, per profile, the devices that may have it — a claim the
 * device row confirms, left behind when a device is deleted, skipped by the reads that do not
 * confirm it and removed with the profile. Thread-safe; stages complete on driver I/O threads.
 */
final class ProfileLinks {

  /** Device rows read per query when the profiles of many devices are read. */
  static final int READ_CHUNK = 100;

  /** What {@link #current} found. */
  record Current(boolean exists, @Nullable UUID profile) {}

  private final CqlSession session;
  private final PreparedStatement profileOf;
  private final PreparedStatement profilesOf;
  private final PreparedStatement set;
  private final PreparedStatement setIfHeld;
  private final PreparedStatement listed;
  private final PreparedStatement list;
  private final PreparedStatement unlist;
  private final PreparedStatement unlistAll;

  /** Prepares the statements; blocks. */
  ProfileLinks(CqlSession session, String keyspace) {
    this.session = session;
    String devices = keyspace + ".devices";
    String byProfile = keyspace + ".devices_by_profile";
    profileOf = session.prepare("SELECT name, device_profile_id FROM " + devices + " WHERE id = ?");
    profilesOf = session.prepare("SELECT id, device_profile_id FROM " + devices + " WHERE id IN ?");
    set =
        session.prepare("UPDATE " + devices + " SET device_profile_id = ? WHERE id = ? IF EXISTS");
    setIfHeld =
        session.prepare(
            "UPDATE "
                + devices
                + " SET device_profile_id = ? WHERE id = ? IF device_profile_id = ?");
    listed = session.prepare("SELECT device_id FROM " + byProfile + " WHERE profile_id = ?");
    list = session.prepare("INSERT INTO " + byProfile + " (profile_id, device_id) VALUES (?, ?)");
    unlist =
        session.prepare("DELETE FROM " + byProfile + " WHERE profile_id = ? AND device_id = ?");
    unlistAll = session.prepare("DELETE FROM " + byProfile + " WHERE profile_id = ?");
  }

  /** Whether the device exists, and its profile. */
  CompletionStage<Current> current(DeviceId device) {
    return session
        .executeAsync(profileOf.bind(device.value()).setIdempotent(true))
        .thenApply(
            rs -> {
              Row row = rs.one();
              // A row without a name is what a write racing a delete leaves: no device.
              if (row == null || row.getString("name") == null) {
                return new Current(false, null);
              }
              return new Current(true, row.getUuid("device_profile_id"));
            });
  }

  /**
   * The profiles of those of {@code devices} that have one, read {@value #READ_CHUNK} at a time.
   */
  CompletionStage<Map<DeviceId, DeviceProfileId>> profilesOf(Collection<DeviceId> devices) {
    List<UUID> ids = devices.stream().map(DeviceId::value).distinct().toList();
    List<CompletableFuture<List<Row>>> reads = new ArrayList<>();
    for (int from = 0; from < ids.size(); from += READ_CHUNK) {
      List<UUID> chunk = ids.subList(from, Math.min(ids.size(), from + READ_CHUNK));
      reads.add(
          AsyncRows.collect(
                  session.executeAsync(profilesOf.bind(chunk).setIdempotent(true)),
                  row -> row,
                  Integer.MAX_VALUE)
              .toCompletableFuture());
    }
    return CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            done -> {
              Map<DeviceId, DeviceProfileId> found = new HashMap<>();
              for (CompletableFuture<List<Row>> read : reads) {
                for (Row row : read.join()) {
                  UUID device = row.getUuid("id");
                  UUID profile = row.getUuid("device_profile_id");
                  if (device != null && profile != null) {
                    found.put(new DeviceId(device), new DeviceProfileId(profile));
                  }
                }
              }
              return found;
            });
  }

  /**
   * Writes the device's profile into its row, if the row exists.
   *
   * @return whether it was written
   */
  CompletionStage<Boolean> set(DeviceId device, DeviceProfileId profile) {
    return session
        .executeAsync(set.bind(profile.value(), device.value()))
        .thenApply(rs -> rs.wasApplied());
  }

  /**
   * Sets the device's profile to {@code previous} (null: none) if its row still has {@code held}.
   */
  CompletionStage<Void> revert(
      DeviceId device, DeviceProfileId held, @Nullable DeviceProfileId previous) {
    return session
        .executeAsync(
            setIfHeld.bind(
                previous == null ? null : previous.value(), device.value(), held.value()))
        .thenApply(rs -> null);
  }

  /** Lists the device under the profile (idempotent). */
  CompletionStage<Void> list(DeviceProfileId profile, DeviceId device) {
    return session
        .executeAsync(list.bind(profile.value(), device.value()).setIdempotent(true))
        .thenApply(rs -> null);
  }

  /** Takes the device off the profile's list unless its row has that profile (read first). */
  CompletionStage<Void> unlistUnlessHeld(DeviceProfileId profile, DeviceId device) {
    return current(device)
        .thenCompose(
            now ->
                now.exists() && profile.value().equals(now.profile())
                    ? CompletableFuture.completedFuture(null)
                    : session
                        .executeAsync(
                            unlist.bind(profile.value(), device.value()).setIdempotent(true))
                        .thenApply(rs -> null));
  }

  /**
   * Whether any device has the profile: the listed devices' rows are read, {@value #READ_CHUNK} at
   * a time, until one has it; the listed devices found not to have it are skipped but left listed
   * (as in {@link #holders}).
   */
  CompletionStage<Boolean> anyDevice(DeviceProfileId profile) {
    return AsyncRows.collect(
            session.executeAsync(listed.bind(profile.value()).setIdempotent(true)),
            row -> new DeviceId(Objects.requireNonNull(row.getUuid(0))),
            Integer.MAX_VALUE)
        .thenCompose(devices -> firstHolder(profile, devices, 0));
  }

  private CompletionStage<Boolean> firstHolder(
      DeviceProfileId profile, List<DeviceId> devices, int from) {
    if (from >= devices.size()) {
      return CompletableFuture.completedFuture(false);
    }
    List<DeviceId> chunk = devices.subList(from, Math.min(devices.size(), from + READ_CHUNK));
    return profilesOf(chunk)
        .thenCompose(
            profiles -> {
              if (profiles.containsValue(profile)) {
                return CompletableFuture.completedFuture(true);
              }
              // Not unlisted here: a listing its row does not confirm yet may be an assignment
              // between its two writes. The delete that finds no holder removes the whole list.
              return firstHolder(profile, devices, from + READ_CHUNK);
            });
  }

  /**
   * Every device that has the profile: the listed devices' rows are read, {@value #READ_CHUNK} at a
   * time (one chunk after the other); those found not to have it are skipped but left listed (a
   * listing not yet confirmed may be an assignment between its two writes, which must stay listed
   * for later fan-outs and a later delete's check).
   */
  CompletionStage<List<DeviceId>> holders(DeviceProfileId profile) {
    return AsyncRows.collect(
            session.executeAsync(listed.bind(profile.value()).setIdempotent(true)),
            row -> new DeviceId(Objects.requireNonNull(row.getUuid(0))),
            Integer.MAX_VALUE)
        .thenCompose(devices -> holders(profile, devices, 0, new ArrayList<>()));
  }

  private CompletionStage<List<DeviceId>> holders(
      DeviceProfileId profile, List<DeviceId> devices, int from, List<DeviceId> out) {
    if (from >= devices.size()) {
      return CompletableFuture.completedFuture(out);
    }
    List<DeviceId> chunk = devices.subList(from, Math.min(devices.size(), from + READ_CHUNK));
    return profilesOf(chunk)
        .thenCompose(
            profiles -> {
              for (DeviceId device : chunk) {
                if (profile.equals(profiles.get(device))) {
                  out.add(device);
                }
              }
              return holders(profile, devices, from + READ_CHUNK, out);
            });
  }

  /** Removes the whole list of a deleted profile. */
  CompletionStage<Void> unlistAll(DeviceProfileId profile) {
    return session
        .executeAsync(unlistAll.bind(profile.value()).setIdempotent(true))
        .thenApply(rs -> null);
  }

  /** The device's profile, if the device exists and has one. */
  CompletionStage<Optional<DeviceProfileId>> profileOf(DeviceId device) {
    return current(device)
        .thenApply(
            now ->
                now.exists() && now.profile() != null
                    ? Optional.of(new DeviceProfileId(now.profile()))
                    : Optional.empty());
  }
}
