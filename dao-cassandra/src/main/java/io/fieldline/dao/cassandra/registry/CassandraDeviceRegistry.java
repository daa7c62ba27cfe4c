package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceConflictException;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.MqttBasicLogin;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The Cassandra {@link DeviceRegistry}: {@code devices} by id, {@code device_by_token} for CONNECT,
 * and {@code device_by_name} (one partition, bucket 0) for name-ordered listing and name
 * uniqueness. Put a {@link CachingDeviceRegistry} in front of it for the CONNECT path.
 *
 * <p>Create reserves the name, then the token, each with a lightweight transaction ({@code IF NOT
 * EXISTS}, serial consistency from the driver config), and writes the device row last, so a
 * conflicting create never overwrites anything; if the token is taken the name is released again. A
 * create interrupted by a crash, or whose timed-out lightweight transaction was applied after all,
 * can leave a reserved name or token pointing at no device: reads treat those as absent, and the
 * next create of that name finishes the interrupted one (same id) instead of failing on the name
 * for ever; the devices row of a finished create is then written with {@code IF NOT EXISTS}, so of
 * two creates finishing the same one only the first writes it (the other gets that device if it
 * asked for the same token, else a conflict). Delete removes all three rows in one logged batch.
 *
 * <p>Thread-safe; stages complete on driver I/O threads and fail with {@link
 * io.fieldline.common.StoreException} or {@link DeviceConflictException}.
 */
public final class CassandraDeviceRegistry implements DeviceRegistry {

  /** Length of generated access tokens, as ThingsBoard's. */
  public static final int TOKEN_LENGTH = 20;

  private static final String TOKEN_ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  private static final int MAX_PAGE = 1000;

  private final CqlSession session;
  private final SecureRandom random = new SecureRandom();
  private final PreparedStatement reserveName;
  private final PreparedStatement releaseName;
  private final PreparedStatement reserveToken;
  private final PreparedStatement insertDevice;
  private final PreparedStatement insertDeviceIfAbsent;
  private final PreparedStatement selectByToken;
  private final PreparedStatement selectById;
  private final PreparedStatement scanDevices;
  private final PreparedStatement listFirst;
  private final PreparedStatement listAfter;
  private final PreparedStatement deleteDevice;
  private final PreparedStatement deleteToken;
  private final PreparedStatement deleteName;

  /** Prepares the statements; blocks, so call at startup. */
  public CassandraDeviceRegistry(CqlSession session, CassandraConfig config) {
    this.session = session;
    String ks = config.keyspace();
    reserveName =
        session.prepare(
            "INSERT INTO "
                + ks
                + ".device_by_name (bucket, name, device_id) VALUES (0, ?, ?)"
                + " IF NOT EXISTS");
    releaseName =
        session.prepare(
            "DELETE FROM " + ks + ".device_by_name WHERE bucket = 0 AND name = ? IF device_id = ?");
    reserveToken =
        session.prepare(
            "INSERT INTO "
                + ks
                + ".device_by_token (access_token, device_id) VALUES (?, ?)"
                + " IF NOT EXISTS");
    String insert =
        "INSERT INTO "
            + ks
            + ".devices (id, name, type, access_token, created_time)"
            + " VALUES (?, ?, ?, ?, ?)";
    insertDevice = session.prepare(insert);
    insertDeviceIfAbsent = session.prepare(insert + " IF NOT EXISTS");
    selectByToken =
        session.prepare("SELECT device_id FROM " + ks + ".device_by_token WHERE access_token = ?");
    selectById =
        session.prepare(
            "SELECT id, name, type, access_token, created_time FROM "
                + ks
                + ".devices WHERE id = ?");
    scanDevices =
        session.prepare(
            "SELECT id, name, type, access_token, created_time FROM " + ks + ".devices");
    listFirst =
        session.prepare(
            "SELECT name, device_id FROM " + ks + ".device_by_name WHERE bucket = 0 LIMIT ?");
    listAfter =
        session.prepare(
            "SELECT name, device_id FROM "
                + ks
                + ".device_by_name WHERE bucket = 0 AND name > ? LIMIT ?");
    deleteDevice = session.prepare("DELETE FROM " + ks + ".devices WHERE id = ?");
    deleteToken = session.prepare("DELETE FROM " + ks + ".device_by_token WHERE access_token = ?");
    deleteName =
        session.prepare("DELETE FROM " + ks + ".device_by_name WHERE bucket = 0 AND name = ?");
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    return translated(
        session
            .executeAsync(selectByToken.bind(token).setIdempotent(true))
            .thenCompose(
                rs -> {
                  Row row = rs.one();
                  if (row == null) {
                    return CompletableFuture.completedFuture(Optional.<Device>empty());
                  }
                  return loadDevice(Objects.requireNonNull(row.getUuid(0)))
                      // A stale token row (crash during create or delete) is not a credential.
                      .thenApply(d -> d.filter(device -> device.accessToken().equals(token)));
                }));
  }

  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    // Only access tokens can be stored so far: no basic credential exists to match.
    return CompletableFuture.completedFuture(Optional.empty());
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    // Only access tokens can be stored so far: no certificate credential exists to match.
    return CompletableFuture.completedFuture(Optional.empty());
  }

  /**
   * Every device, at most {@code limit}, in no particular order (a paged scan of {@code devices}).
   * Blocks; for the start-up fill of the token cache.
   */
  public List<Device> scan(int limit) {
    List<Device> devices = new ArrayList<>();
    for (Row row : session.execute(scanDevices.bind().setPageSize(5_000))) {
      if (devices.size() >= limit) {
        break;
      }
      if (!row.isNull(1) && !row.isNull(2) && !row.isNull(3)) {
        devices.add(device(row));
      }
    }
    return devices;
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    return translated(loadDevice(id.value()));
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException (synchronously) for a blank name or token, or one longer than
   *     255 characters
   */
  @Override
  public CompletionStage<Device> create(String name, String type, Optional<String> accessToken) {
    if (name.isBlank() || name.length() > 255) {
      throw new IllegalArgumentException("device name must be 1..255 characters, not blank");
    }
    String token = accessToken.orElseGet(this::generateToken);
    if (token.isBlank() || token.length() > 255) {
      throw new IllegalArgumentException("access token must be 1..255 characters, not blank");
    }
    String deviceType = type.isBlank() ? "default" : type;
    long createdTime = System.currentTimeMillis();
    UUID fresh = DeviceId.random().value();
    CompletionStage<Device> created =
        session
            .executeAsync(reservation(reserveName, "name", name, fresh))
            .thenCompose(
                rs -> {
                  if (rs.wasApplied()) {
                    return CompletableFuture.completedFuture(fresh);
                  }
                  // The name is taken. If its owner has no devices row, an earlier create died
                  // half-way (a timed-out lightweight transaction may still have been applied):
                  // finish that one instead of leaving the name blocked forever.
                  UUID owner = Objects.requireNonNull(rs.one()).getUuid("device_id");
                  return loadDevice(Objects.requireNonNull(owner))
                      .thenApply(
                          existing -> {
                            if (existing.isPresent()) {
                              throw new DeviceConflictException(
                                  "device name '" + name + "' is taken");
                            }
                            return owner;
                          });
                })
            .thenCompose(
                id ->
                    session
                        .executeAsync(reservation(reserveToken, "access_token", token, id))
                        .thenCompose(
                            rs -> {
                              boolean ours =
                                  rs.wasApplied()
                                      || id.equals(
                                          Objects.requireNonNull(rs.one()).getUuid("device_id"));
                              if (ours) {
                                Device device =
                                    new Device(
                                        new DeviceId(id), name, deviceType, token, createdTime);
                                return id.equals(fresh)
                                    ? session
                                        .executeAsync(
                                            deviceRow(insertDevice, device)
                                                .setIdempotence(true)
                                                .build())
                                        .thenApply(inserted -> device)
                                    : finishResumed(device);
                              }
                              return session
                                  .executeAsync(reservation(releaseName, "name", name, id))
                                  .thenApply(
                                      released -> {
                                        throw new DeviceConflictException("access token is taken");
                                      });
                            }));
    return translated(created);
  }

  // A resumed create may race another one resuming the same id: the devices row decides, once.
  // The loser gets the winner's device when it asked for the same token, else a conflict.
  private CompletionStage<Device> finishResumed(Device device) {
    return session
        .executeAsync(deviceRow(insertDeviceIfAbsent, device).build())
        .thenApply(
            rs -> {
              if (rs.wasApplied()) {
                return device;
              }
              // A refused IF NOT EXISTS returns [applied] first, then the existing row's columns.
              Row existing = Objects.requireNonNull(rs.one());
              Device winner =
                  new Device(
                      device.id(),
                      Objects.requireNonNull(existing.getString("name")),
                      Objects.requireNonNull(existing.getString("type")),
                      Objects.requireNonNull(existing.getString("access_token")),
                      existing.getLong("created_time"));
              if (winner.accessToken().equals(device.accessToken())) {
                return winner;
              }
              throw new DeviceConflictException("device name '" + device.name() + "' is taken");
            });
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
                  List<CompletableFuture<Optional<Device>>> loads = new ArrayList<>(ids.size());
                  for (UUID id : ids) {
                    loads.add(loadDevice(id).toCompletableFuture());
                  }
                  return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]))
                      .thenApply(
                          done ->
                              loads.stream()
                                  .map(CompletableFuture::join)
                                  .flatMap(Optional::stream)
                                  .toList());
                }));
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    return translated(
        loadDevice(id.value())
            .thenCompose(
                found -> {
                  if (found.isEmpty()) {
                    return CompletableFuture.completedFuture(false);
                  }
                  Device device = found.get();
                  BatchStatement batch =
                      BatchStatement.builder(BatchType.LOGGED)
                          .addStatement(deleteToken.bind(device.accessToken()))
                          .addStatement(deleteName.bind(device.name()))
                          .addStatement(deleteDevice.bind(id.value()))
                          .setIdempotence(true)
                          .build();
                  return session.executeAsync(batch).thenApply(rs -> true);
                }));
  }

  // Writes bind by column name: the driver looks each name up per call, which is fine on the admin
  // and CONNECT-miss paths, and the statement text cannot drift from its binding. (Reads keep
  // bind(values): one marker, or markers that repeat a column.)
  private static BoundStatement reservation(
      PreparedStatement statement, String keyColumn, String key, UUID deviceId) {
    return statement
        .boundStatementBuilder()
        .setString(keyColumn, key)
        .setUuid("device_id", deviceId)
        .build();
  }

  private static BoundStatementBuilder deviceRow(PreparedStatement insert, Device device) {
    return insert
        .boundStatementBuilder()
        .setUuid("id", device.id().value())
        .setString("name", device.name())
        .setString("type", device.type())
        .setString("access_token", device.accessToken())
        .setLong("created_time", device.createdTime());
  }

  private CompletionStage<Optional<Device>> loadDevice(UUID id) {
    return session
        .executeAsync(selectById.bind(id).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(CassandraDeviceRegistry::device));
  }

  private static Device device(Row row) {
    return new Device(
        new DeviceId(Objects.requireNonNull(row.getUuid(0))),
        Objects.requireNonNull(row.getString(1)),
        Objects.requireNonNull(row.getString(2)),
        Objects.requireNonNull(row.getString(3)),
        row.getLong(4));
  }

  private String generateToken() {
    char[] token = new char[TOKEN_LENGTH];
    for (int i = 0; i < token.length; i++) {
      token[i] = TOKEN_ALPHABET.charAt(random.nextInt(TOKEN_ALPHABET.length()));
    }
    return new String(token);
  }

  // Conflicts stay DeviceConflictException; every other failure becomes a StoreException.
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
              cause instanceof DeviceConflictException ? cause : StoreErrors.translate(cause));
        });
    return result;
  }
}
