package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.uuid.Uuids;
import io.fieldline.common.DeadLetter;
import io.fieldline.common.DeadLetterStore;
import io.fieldline.common.DeviceId;
import io.fieldline.dao.cassandra.internal.cql.AsyncRows;
import io.fieldline.dao.cassandra.internal.cql.StoreErrors;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The Cassandra {@link DeadLetterStore}: one row per unparseable payload in {@code dead_letters},
 * partitioned by device, newest first, expiring after {@code dead-letter-ttl}. Writes are
 * idempotent single inserts with {@code write-consistency} through the shared {@link WriteLimiter}
 * (a device flooding garbage cannot bypass the global bound).
 *
 * <p>Thread-safe; stages complete on driver I/O threads and fail with {@link
 * io.fieldline.common.StoreException}.
 */
public final class CassandraDeadLetterStore implements DeadLetterStore {

  private final CqlSession session;
  private final CassandraConfig config;
  private final WriteRunner runner;
  private final PreparedStatement insert;
  private final PreparedStatement select;

  /** Prepares the statements; blocks, so call at startup. */
  public CassandraDeadLetterStore(
      CqlSession session, CassandraConfig config, WriteLimiter limiter, MeterRegistry registry) {
    this.session = session;
    this.config = config;
    this.runner =
        new WriteRunner(
            session, limiter, new StoreMetrics(registry, limiter), "dead-letter writes");
    String ks = config.keyspace();
    insert =
        session.prepare(
            "INSERT INTO "
                + ks
                + ".dead_letters (device_id, id, received_at, topic, reason,"
                + " payload) VALUES (?, ?, ?, ?, ?, ?) USING TTL ?");
    select =
        session.prepare(
            "SELECT id, received_at, topic, reason, payload FROM "
                + ks
                + ".dead_letters WHERE device_id = ? LIMIT ?");
  }

  @Override
  public CompletionStage<Void> write(DeadLetter deadLetter) {
    int ttl = (int) config.deadLetterTtl().getSeconds();
    return runner.run(
        StoreMetrics.Op.DEAD_LETTER,
        List.of(
            insert
                .bind(
                    deadLetter.deviceId().value(),
                    Uuids.timeBased(),
                    deadLetter.receivedAt(),
                    deadLetter.topic(),
                    deadLetter.reason(),
                    ByteBuffer.wrap(deadLetter.payload().clone()),
                    ttl)
                .setIdempotent(true)
                .setConsistencyLevel(config.writeConsistency())),
        1,
        1);
  }

  /** The device's newest dead letters, newest first, at most {@code limit}. */
  public CompletionStage<List<StoredDeadLetter>> list(DeviceId deviceId, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1");
    }
    CompletableFuture<List<StoredDeadLetter>> result = new CompletableFuture<>();
    AsyncRows.collect(
            session.executeAsync(select.bind(deviceId.value(), limit)),
            row -> deadLetter(deviceId, row),
            limit)
        .whenComplete(
            (rows, error) -> {
              if (error != null) {
                result.completeExceptionally(StoreErrors.translate(error));
              } else {
                result.complete(rows);
              }
            });
    return result;
  }

  private static StoredDeadLetter deadLetter(DeviceId deviceId, Row row) {
    ByteBuffer buffer = row.getByteBuffer(4);
    byte[] payload = new byte[buffer == null ? 0 : buffer.remaining()];
    if (buffer != null) {
      buffer.duplicate().get(payload);
    }
    return new StoredDeadLetter(
        Objects.requireNonNull(row.getUuid(0)),
        deviceId,
        row.getLong(1),
        Objects.requireNonNull(row.getString(2)),
        Objects.requireNonNull(row.getString(3)),
        payload);
  }
}
