package io.fieldline.dao.cassandra.profile;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileDraft;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.DeviceProfilePageQuery;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import io.fieldline.dao.cassandra.profile.ProfileTable.ProfileRow;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The Cassandra {@link DeviceProfileStore}: {@code device_profiles} by id ({@link ProfileTable}),
 * unique names and provision keys ({@link ProfileClaims}, written by {@link ProfileWrites}), the
 * default profile (the single row of {@code device_profile_default}), and the profile of each
 * device ({@link ProfileLinks}).
 *
 * <p>Listing reads every profile (at most {@value #MAX_LISTED}) and sorts and pages in memory:
 * profiles are few, as in ThingsBoard (one per kind of device). A delete first marks the row as
 * being deleted, then checks that no device has the profile, then deletes the row and its claims;
 * an assignment lists the device under the profile, writes the device's row, then reads the profile
 * again and undoes itself if the profile is gone or being deleted. So of an assignment and a delete
 * running together, either the delete sees the device and refuses, or the assignment sees the mark
 * and fails: a device never keeps a deleted profile.
 *
 * <p>Thread-safe; stages complete on driver I/O threads and fail with {@link
 * io.fieldline.common.StoreException}, {@link DeviceConflictException} or {@link
 * IllegalArgumentException}.
 */
public final class CassandraDeviceProfileStore implements DeviceProfileStore {

  /** Most profiles a listing reads. */
  public static final int MAX_LISTED = 10_000;

  private final CqlSession session;
  private final ProfileTable table;
  private final ProfileClaims names;
  private final ProfileClaims keys;
  private final ProfileWrites writes;
  private final ProfileLinks links;
  private final PreparedStatement readDefault;
  private final PreparedStatement writeDefault;

  /** Prepares the statements; blocks, so call at startup. */
  public CassandraDeviceProfileStore(CqlSession session, String keyspace) {
    this.session = session;
    this.table = new ProfileTable(session, keyspace);
    this.names = new ProfileClaims(session, keyspace, "device_profile_by_name", "name");
    this.keys = new ProfileClaims(session, keyspace, "device_profile_by_key", "provision_key");
    this.writes = new ProfileWrites(table, names, keys);
    this.links = new ProfileLinks(session, keyspace);
    readDefault =
        session.prepare(
            "SELECT profile_id FROM " + keyspace + ".device_profile_default WHERE singleton = 0");
    writeDefault =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".device_profile_default (singleton, profile_id) VALUES (0, ?)");
  }

  @Override
  public CompletionStage<DeviceProfile> create(DeviceProfileDraft draft) {
    return translated(
        () -> writes.create(draft).thenCompose(profile -> defaulted(profile, draft.isDefault())));
  }

  @Override
  public CompletionStage<Optional<DeviceProfile>> update(
      DeviceProfileId id, DeviceProfileDraft draft) {
    return translated(
        () ->
            writes
                .update(id, draft)
                .thenCompose(
                    updated ->
                        updated.isEmpty()
                            ? CompletableFuture.completedFuture(updated)
                            : defaulted(updated.get(), draft.isDefault()).thenApply(Optional::of)));
  }

  // Makes the profile the default if asked; otherwise reads whether it is.
  private CompletionStage<DeviceProfile> defaulted(DeviceProfile profile, boolean makeDefault) {
    if (makeDefault) {
      return session
          .executeAsync(writeDefault.bind(profile.id().value()).setIdempotent(true))
          .thenApply(rs -> withDefault(profile, true));
    }
    return defaultId().thenApply(id -> withDefault(profile, profile.id().value().equals(id)));
  }

  private CompletionStage<@Nullable UUID> defaultId() {
    return session
        .executeAsync(readDefault.bind().setIdempotent(true))
        .thenApply(
            rs -> {
              Row row = rs.one();
              return row == null ? null : row.getUuid(0);
            });
  }

  private static DeviceProfile withDefault(DeviceProfile p, boolean isDefault) {
    return new DeviceProfile(
        p.id(),
        p.name(),
        p.type(),
        p.transportType(),
        p.provisionType(),
        p.provisionDeviceKey(),
        p.secret(),
        p.description(),
        isDefault,
        p.createdTime());
  }

  @Override
  public CompletionStage<Optional<DeviceProfile>> findById(DeviceProfileId id) {
    return translated(
        () ->
            table
                .load(id)
                .thenCompose(
                    row ->
                        row.isEmpty()
                            ? CompletableFuture.completedFuture(Optional.<DeviceProfile>empty())
                            : defaulted(row.get().profile(), false).thenApply(Optional::of)));
  }

  @Override
  public CompletionStage<Optional<DeviceProfile>> findByProvisionKey(String provisionDeviceKey) {
    return translated(
        () ->
            keys.owner(provisionDeviceKey)
                .thenCompose(
                    owner ->
                        owner.isEmpty()
                            ? CompletableFuture.completedFuture(Optional.<ProfileRow>empty())
                            : table.load(new DeviceProfileId(owner.get())))
                .thenApply(
                    row ->
                        row.map(ProfileRow::profile)
                            .filter(p -> provisionDeviceKey.equals(p.provisionDeviceKey()))));
  }

  @Override
  public CompletionStage<PageData<DeviceProfile>> page(DeviceProfilePageQuery query) {
    return translated(
        () ->
            table
                .scan(MAX_LISTED)
                .thenCombine(defaultId(), (rows, defaultId) -> page(query, rows, defaultId)));
  }

  private static PageData<DeviceProfile> page(
      DeviceProfilePageQuery query, List<ProfileRow> rows, @Nullable UUID defaultId) {
    String search = query.textSearch().map(t -> t.toLowerCase(Locale.ROOT)).orElse("");
    Comparator<DeviceProfile> order = comparator(query.sortProperty());
    if (query.sortOrder() == SortOrder.DESC) {
      order = order.reversed();
    }
    order = order.thenComparing(DeviceProfile::name).thenComparing(p -> p.id().value());
    List<DeviceProfile> matching =
        rows.stream()
            .map(ProfileRow::profile)
            .filter(p -> p.name().toLowerCase(Locale.ROOT).contains(search))
            .map(p -> withDefault(p, p.id().value().equals(defaultId)))
            .sorted(order)
            .toList();
    long from = (long) query.page() * query.pageSize();
    List<DeviceProfile> data =
        from >= matching.size()
            ? List.of()
            : matching.subList(
                (int) from, (int) Math.min(matching.size(), from + query.pageSize()));
    return PageData.of(data, matching.size(), query.pageSize(), query.page());
  }

  private static Comparator<DeviceProfile> comparator(DeviceProfilePageQuery.SortProperty by) {
    return switch (by) {
      case NAME -> Comparator.comparing(DeviceProfile::name);
      case CREATED_TIME -> Comparator.comparingLong(DeviceProfile::createdTime);
      case TRANSPORT_TYPE -> Comparator.comparing(DeviceProfile::transportType);
      case PROVISION_TYPE -> Comparator.comparing(p -> p.provisionType().name());
    };
  }

  @Override
  public CompletionStage<Deletion> delete(DeviceProfileId id) {
    return translated(
        () ->
            table
                .load(id)
                .thenCompose(
                    row ->
                        row.isEmpty()
                            ? CompletableFuture.completedFuture(Deletion.NOT_FOUND)
                            : defaultId()
                                .thenCompose(
                                    defaultId ->
                                        id.value().equals(defaultId)
                                            ? CompletableFuture.completedFuture(Deletion.DEFAULT)
                                            : deleteUnused(row.get().profile()))));
  }

  private CompletionStage<Deletion> deleteUnused(DeviceProfile profile) {
    DeviceProfileId id = profile.id();
    return table
        .markDeleting(profile)
        .thenCompose(
            marked -> {
              if (!marked) {
                throw new DeviceConflictException(
                    "device profile " + id + " changed or is being deleted meanwhile; try again");
              }
              return links.anyDevice(id);
            })
        .thenCompose(
            inUse -> {
              if (inUse) {
                return table.clearDeleting(id).thenApply(done -> Deletion.IN_USE);
              }
              return table
                  .delete(id)
                  .thenCompose(done -> names.release(profile.name(), id.value()))
                  .thenCompose(
                      done ->
                          profile.provisionDeviceKey() == null
                              ? CompletableFuture.<Void>completedFuture(null)
                              : keys.release(profile.provisionDeviceKey(), id.value()))
                  .thenCompose(done -> links.unlistAll(id))
                  .thenApply(done -> Deletion.DELETED);
            });
  }

  @Override
  public CompletionStage<Boolean> assign(DeviceId device, DeviceProfileId profile) {
    return translated(
        () ->
            usable(profile)
                .thenCompose(ok -> links.current(device))
                .thenCompose(
                    current -> {
                      if (!current.exists()) {
                        return CompletableFuture.completedFuture(false);
                      }
                      DeviceProfileId previous =
                          current.profile() == null ? null : new DeviceProfileId(current.profile());
                      return links
                          .list(profile, device)
                          .thenCompose(listed -> links.set(device, profile))
                          .thenCompose(
                              written ->
                                  written
                                      ? confirm(device, profile, previous)
                                      : links
                                          .unlistUnlessHeld(profile, device)
                                          .thenApply(done -> false));
                    }));
  }

  // The profile exists and no delete is checking it.
  private CompletionStage<Void> usable(DeviceProfileId profile) {
    return table
        .load(profile)
        .thenApply(
            row -> {
              if (row.isEmpty() || row.get().deleting()) {
                throw new IllegalArgumentException("device profile " + profile + " not found");
              }
              return null;
            });
  }

  // Read the profile again after the device row was written: a delete that started meanwhile
  // either saw the device listed (and refuses), or is seen here (and the assignment undoes).
  private CompletionStage<Boolean> confirm(
      DeviceId device, DeviceProfileId profile, @Nullable DeviceProfileId previous) {
    return table
        .load(profile)
        .thenCompose(
            row -> {
              if (row.isPresent() && !row.get().deleting()) {
                return previous == null || previous.equals(profile)
                    ? CompletableFuture.completedFuture(true)
                    : links.unlistUnlessHeld(previous, device).thenApply(done -> true);
              }
              return links
                  .revert(device, profile, previous)
                  .thenCompose(done -> links.unlistUnlessHeld(profile, device))
                  .thenApply(
                      done -> {
                        throw new IllegalArgumentException(
                            "device profile " + profile + " not found");
                      });
            });
  }

  @Override
  public CompletionStage<Optional<DeviceProfileId>> profileOf(DeviceId device) {
    return translated(() -> links.profileOf(device));
  }

  @Override
  public CompletionStage<Map<DeviceId, DeviceProfileId>> profilesOf(Collection<DeviceId> devices) {
    if (devices.isEmpty()) {
      return CompletableFuture.completedFuture(Map.of());
    }
    return translated(() -> links.profilesOf(devices));
  }

  @Override
  public CompletionStage<List<DeviceId>> devices(DeviceProfileId profile) {
    return translated(() -> links.holders(profile));
  }

  // Conflicts stay DeviceConflictException and refused input IllegalArgumentException (the port's
  // contract), thrown or failed; every other failure becomes a StoreException.
  private static <T> CompletionStage<T> translated(Supplier<CompletionStage<T>> call) {
    CompletionStage<T> stage;
    try {
      stage = call.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    stage.whenComplete(
        (value, error) -> {
          if (error == null) {
            result.complete(value);
            return;
          }
          Throwable cause =
              error instanceof CompletionException && error.getCause() != null
                  ? error.getCause()
                  : error;
          result.completeExceptionally(
              cause instanceof DeviceConflictException || cause instanceof IllegalArgumentException
                  ? cause
                  : StoreErrors.translate(cause));
        });
    return result;
  }
}
