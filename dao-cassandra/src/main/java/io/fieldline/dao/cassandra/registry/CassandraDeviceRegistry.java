package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import io.fieldline.dao.cassandra.profile.CassandraDeviceProfileStore;
import io.fieldline.dao.cassandra.registry.DeviceTable.DeviceRow;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * The Cassandra {@link DeviceRegistry} and {@link DeviceCredentialsStore}: {@code devices} by id
 * (each row holding the device's one credential), the credential indexes {@code device_by_token}
 * and {@code device_by_credentials} for CONNECT ({@link CredentialIndex}), and {@code
 * device_by_name} (one partition, bucket 0) for name-ordered listing and name uniqueness. Put a
 * {@link CachingDeviceRegistry} in front of it for the CONNECT path.
 *
 * <p>Names and credentials are unique by lightweight transactions: see {@link DeviceCreation} for
 * create and {@link CredentialWrites} for a replacement. A lookup follows an index to a row and
 * accepts it only if the row holds that credential (an index claim no row holds is absent). An
 * MQTT_BASIC login is tried under ThingsBoard's three forms in the contract's order, the first
 * whose password matches winning; passwords are checked by {@link PasswordHashing}, on its own
 * threads. Delete removes the row if unchanged since read, then releases its claims ({@link
 * DeviceDeletion}); update does the same for a new name ({@link DeviceUpdates}).
 *
 * <p>Creates, updates and deletes are recorded in {@code device_changes} ({@link DeviceChangeLog})
 * before they complete; {@link #page} lists from this node's in-memory {@link DeviceDirectory},
 * which reads that log to catch up with every node's changes before it answers.
 *
 * <p>Thread-safe; stages complete on driver I/O (or bcrypt) threads and fail with {@link
 * io.fieldline.common.StoreException}, {@link DeviceConflictException}, or {@link
 * IllegalArgumentException} for a replacement the current credential makes invalid. {@link #close}
 * stops the bcrypt threads.
 */
public final class CassandraDeviceRegistry
    implements DeviceRegistry, DeviceCredentialsStore, AutoCloseable {

  /** Length of generated access tokens, as ThingsBoard's. */
  public static final int TOKEN_LENGTH = 20;

  private static final String TOKEN_ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  private static final int MAX_PAGE = 1000;

  private final CqlSession session;
  private final SecureRandom random = new SecureRandom();
  private final DeviceTable table;
  private final CredentialIndex index;
  private final PasswordHashing passwords;
  private final DeviceCreation creation;
  private final CredentialWrites writes;
  private final DeviceDeletion deletion;
  private final DeviceUpdates updates;
  private final DeviceChangeLog changeLog;
  private final DeviceDirectory directory;
  private final PreparedStatement listFirst;
  private final PreparedStatement listAfter;
  private final CassandraDeviceProfileStore profiles;

  /** Prepares the statements and starts the bcrypt threads; blocks, so call at startup. */
  public CassandraDeviceRegistry(CqlSession session, CassandraConfig config) {
    this.session = session;
    String ks = config.keyspace();
    this.table = new DeviceTable(session, ks);
    this.index = new CredentialIndex(session, ks);
    this.passwords = new PasswordHashing(config.passwordHashing());
    DeviceNames names = new DeviceNames(session, ks);
    this.creation = new DeviceCreation(table, index, names);
    this.writes = new CredentialWrites(table, index, passwords);
    this.deletion = new DeviceDeletion(table, index, names);
    this.updates = new DeviceUpdates(table, names);
    this.changeLog = new DeviceChangeLog(session, ks);
    this.directory = new DeviceDirectory(table, changeLog, System::currentTimeMillis);
    // A device's profile is a column of its row; the profiles themselves are the profile store's.
    this.profiles = new CassandraDeviceProfileStore(session, ks);
    listFirst =
        session.prepare(
            "SELECT name, device_id FROM " + ks + ".device_by_name WHERE bucket = 0 LIMIT ?");
    listAfter =
        session.prepare(
            "SELECT name, device_id FROM "
                + ks
                + ".device_by_name WHERE bucket = 0 AND name > ? LIMIT ?");
  }

  /**
   * The device profiles, and the profile of each device (a column of the devices' rows), on this
   * registry's session.
   */
  public DeviceProfileStore deviceProfiles() {
    return profiles;
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    return translated(holder(CredentialKey.accessToken(token)).thenApply(this::device));
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    return translated(holder(CredentialKey.certificate(sha256Fingerprint)).thenApply(this::device));
  }

  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    return translated(firstMatch(CredentialKey.candidates(login), 0, login));
  }

  // Form by form, in order: a form nobody holds, or whose password does not match, passes to the
  // next (as ThingsBoard's lookup does); a credential without a password matches any password.
  private CompletionStage<Optional<Device>> firstMatch(
      List<CredentialKey> candidates, int next, MqttBasicLogin login) {
    if (next == candidates.size()) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    return holder(candidates.get(next))
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return firstMatch(candidates, next + 1, login);
              }
              DeviceRow row = found.get();
              String hash = row.credentials().passwordHash();
              if (hash == null) {
                return CompletableFuture.completedFuture(Optional.of(row.device()));
              }
              byte[] password = login.password();
              if (password == null) {
                return firstMatch(candidates, next + 1, login);
              }
              return passwords
                  .matches(password, hash)
                  .thenCompose(
                      matches ->
                          matches
                              ? CompletableFuture.completedFuture(Optional.of(row.device()))
                              : firstMatch(candidates, next + 1, login));
            });
  }

  /** The row holding {@code key}; a claim in the index that the row does not hold is no holder. */
  private CompletionStage<Optional<DeviceRow>> holder(CredentialKey key) {
    return index
        .owner(key)
        .thenCompose(
            owner ->
                owner.isEmpty()
                    ? CompletableFuture.completedFuture(Optional.<DeviceRow>empty())
                    : table
                        .load(owner.get())
                        .thenApply(
                            row -> row.filter(found -> found.credentials().key().equals(key))));
  }

  private Optional<Device> device(Optional<DeviceRow> row) {
    return row.map(DeviceRow::device);
  }

  /**
   * Every device, at most {@code limit}, in no particular order (a paged scan of {@code devices}).
   * Blocks.
   */
  public List<Device> scan(int limit) {
    return table.scan(limit).stream().map(DeviceRow::device).toList();
  }

  /**
   * Fills this node's device directory (what {@link #page} lists from) with one paged scan of
   * {@code devices}, handing each device to {@code each} too (the credential cache's preload), on a
   * driver I/O thread. Blocks; once, at start, before any listing (without it the first listing
   * scans).
   *
   * @return the devices in the directory
   * @throws io.fieldline.common.StoreException when the scan fails
   * @throws IllegalStateException when the directory was already filled
   */
  public int loadDirectory(Consumer<Device> each) {
    try {
      directory.load(each).toCompletableFuture().join();
    } catch (CompletionException e) {
      throw StoreErrors.translate(e);
    }
    return directory.size();
  }

  /**
   * Tells {@code listener} of every device a listing's catch-up found changed, by any node (the
   * credential cache forgets it: its cached lookups may hold the old name or type). Any thread.
   */
  public void onDeviceChanged(Consumer<DeviceId> listener) {
    directory.onChanged(listener);
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    return translated(table.load(id.value()).thenApply(this::device));
  }

  @Override
  public CompletionStage<Optional<StoredCredentials>> findCredentials(DeviceId id) {
    return translated(
        table
            .load(id.value())
            .thenApply(row -> row.map(found -> found.credentials().view(found.device()))));
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException (synchronously) for a blank name or token, or one longer than
   *     255 characters
   */
  @Override
  public CompletionStage<Device> create(String name, String type, Optional<String> accessToken) {
    checkName(name);
    String token = accessToken.orElseGet(this::generateToken);
    if (token.isBlank() || token.length() > 255) {
      throw new IllegalArgumentException("access token must be 1..255 characters, not blank");
    }
    return translated(
        recorded(creation.create(name, deviceType(type), CredentialColumns.token(token))));
  }

  /**
   * {@inheritDoc} See {@link DeviceCreation#createAll}: the names of up to {@value
   * DeviceCreation#MAX_BATCH} devices are reserved in one lightweight transaction; more are taken
   * that many at a time, one group after the other.
   *
   * @throws IllegalArgumentException (synchronously) for a blank name, one longer than 255
   *     characters or one given twice
   */
  @Override
  public List<CompletionStage<Device>> createAll(List<NewDevice> devices) {
    List<DeviceCreation.Draft> drafts = new ArrayList<>(devices.size());
    for (NewDevice device : devices) {
      checkName(device.name());
      drafts.add(
          new DeviceCreation.Draft(
              device.name(),
              deviceType(device.type()),
              CredentialColumns.token(generateToken()),
              device.additionalInfoJson()));
    }
    if (drafts.stream().map(DeviceCreation.Draft::name).distinct().count() != drafts.size()) {
      throw new IllegalArgumentException("a device name is given twice");
    }
    List<CompletionStage<Device>> created = new ArrayList<>(drafts.size());
    CompletableFuture<?> previous = CompletableFuture.completedFuture(null);
    for (int from = 0; from < drafts.size(); from += DeviceCreation.MAX_BATCH) {
      List<DeviceCreation.Draft> group =
          drafts.subList(from, Math.min(drafts.size(), from + DeviceCreation.MAX_BATCH));
      CompletableFuture<List<CompletionStage<Device>>> started =
          previous.handle((done, error) -> creation.createAll(group));
      List<CompletableFuture<Device>> stages = new ArrayList<>(group.size());
      for (int i = 0; i < group.size(); i++) {
        int index = i;
        CompletableFuture<Device> stage =
            started.thenCompose(each -> each.get(index)).toCompletableFuture();
        stages.add(stage);
        created.add(translated(recorded(stage)));
      }
      previous = CompletableFuture.allOf(stages.toArray(CompletableFuture<?>[]::new));
    }
    return created;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException (synchronously) for a blank name, or one longer than 255
   *     characters
   */
  @Override
  public CompletionStage<Device> createWithCredentials(
      String name, String type, DeviceCredentials credentials) {
    checkName(name);
    return translated(
        recorded(
            writes
                .columns(credentials, null)
                .thenCompose(columns -> creation.create(name, deviceType(type), columns))));
  }

  @Override
  public CompletionStage<Optional<StoredCredentials>> replaceCredentials(
      DeviceId id, DeviceCredentials credentials) {
    return translated(writes.replace(id.value(), credentials));
  }

  private static void checkName(String name) {
    if (name.isBlank() || name.length() > 255) {
      throw new IllegalArgumentException("device name must be 1..255 characters, not blank");
    }
  }

  private static String deviceType(String type) {
    return type.isBlank() ? "default" : type;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException (synchronously) unless {@code 1 <= pageSize <= 1000}
   */
  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    if (pageSize < 1 || pageSize > MAX_PAGE) {
      throw new IllegalArgumentException("pageSize must be 1.." + MAX_PAGE);
    }
    CompletionStage<AsyncResultSet> page =
        session.executeAsync(
            afterName.isPresent()
                ? listAfter.bind(afterName.get(), pageSize)
                : listFirst.bind(pageSize));
    return translated(
        AsyncRows.collect(page, row -> Objects.requireNonNull(row.getUuid(1)), pageSize)
            .thenCompose(
                ids -> {
                  List<CompletableFuture<Optional<DeviceRow>>> loads = new ArrayList<>(ids.size());
                  for (UUID id : ids) {
                    loads.add(table.load(id).toCompletableFuture());
                  }
                  return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]))
                      .thenApply(
                          done ->
                              loads.stream()
                                  .map(CompletableFuture::join)
                                  .flatMap(Optional::stream)
                                  .map(DeviceRow::device)
                                  .toList());
                }));
  }

  @Override
  public CompletionStage<Optional<Device>> findByName(String name) {
    return translated(updates.findByName(name));
  }

  /**
   * {@inheritDoc} See {@link DeviceUpdates}. A blank type becomes {@code "default"}, as on create.
   *
   * @throws IllegalArgumentException (synchronously) for a blank name, or one longer than 255
   *     characters
   */
  @Override
  public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
    checkName(update.name());
    DeviceUpdate normalised =
        new DeviceUpdate(
            update.id(),
            update.name(),
            deviceType(update.type()),
            update.label(),
            update.additionalInfoJson());
    return translated(recorded(update.id(), updates.update(normalised)));
  }

  /**
   * {@inheritDoc} From this node's {@link DeviceDirectory}, after catching up with every node's
   * changes; then the page's rows are read (so a device deleted meanwhile is left out).
   */
  @Override
  public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
    return translated(directory.page(query));
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    return translated(recorded(id, deletion.delete(id.value())));
  }

  // A create is recorded once it succeeded (a failed one has no id to record; if it was applied
  // after all, the create retried finishes it and is recorded then).
  private CompletionStage<Device> recorded(CompletionStage<Device> create) {
    return create.thenCompose(device -> changeLog.record(device.id()).thenApply(done -> device));
  }

  // Recorded whatever the outcome: one that failed (a timeout) may have been applied.
  private <T> CompletionStage<T> recorded(DeviceId id, CompletionStage<T> change) {
    return change
        .handle((value, error) -> changeLog.record(id).thenCompose(done -> change))
        .thenCompose(outcome -> outcome);
  }

  /** Devices in this node's directory (a gauge). */
  public int directorySize() {
    return directory.size();
  }

  /** Full scans of {@code devices} by this node's directory (a counter). */
  public long directoryFullScans() {
    return directory.fullScans();
  }

  /** Device changes this node could not record in the change log (a counter). */
  public long unrecordedChanges() {
    return changeLog.unrecorded();
  }

  /** Reads of a {@code devices} row whose credential could not be read, so: no device. */
  public long unreadableRows() {
    return table.unreadableRows();
  }

  /** Password hashes and checks waiting for a bcrypt thread (bounded by max-queued). */
  public int passwordChecksQueued() {
    return passwords.queued();
  }

  /** Stops the bcrypt threads; checks still waiting fail. */
  @Override
  public void close() {
    passwords.close();
  }

  private String generateToken() {
    char[] token = new char[TOKEN_LENGTH];
    for (int i = 0; i < token.length; i++) {
      token[i] = TOKEN_ALPHABET.charAt(random.nextInt(TOKEN_ALPHABET.length()));
    }
    return new String(token);
  }

  // Conflicts stay DeviceConflictException and refused input IllegalArgumentException (the port's
  // contract); every other failure becomes a StoreException.
  private static <T> CompletionStage<T> translated(CompletionStage<T> stage) {
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
