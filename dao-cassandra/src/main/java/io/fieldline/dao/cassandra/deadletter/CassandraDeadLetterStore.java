package io.fieldline.dao.cassandra.deadletter;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.uuid.Uuids;
import io.fieldline.common.DeviceId;
import io.fieldline.common.deadletter.DeadLetter;
import io.fieldline.common.deadletter.DeadLetterQueries;
import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.deadletter.StoredDeadLetter;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.BindMarkers;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.cql.WriteRunner;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * The Cassandra {@link DeadLetterStore} and {@link DeadLetterQueries}: one row per unparseable
 * payload in {@code dead_letters}, partitioned by device, newest first, expiring after {@code
 * dead-letter-ttl}. Writes are idempotent single inserts with {@code write-consistency} through the
 * shared {@link WriteLimiter} (a device flooding garbage cannot bypass the global bound); reads use
 * the driver's default consistency and take no limiter slot.
 *
 * <p>Thread-safe; stages complete on driver I/O threads and fail with {@link
 * io.fieldline.common.StoreException}.
 */
public final class CassandraDeadLetterStore implements DeadLetterStore, DeadLetterQueries {

  private final CqlSession session;
  private final CassandraConfig config;
  private final WriteRunner runner;
  private final PreparedStatement insert;
  private final int deviceIdMarker;
  private final int idMarker;
  private final int receivedAtMarker;
  private final int topicMarker;
  private final int reasonMarker;
  private final int payloadMarker;
  private final int ttlMarker;
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
    deviceIdMarker = BindMarkers.indexOf(insert, "device_id");
    idMarker = BindMarkers.indexOf(insert, "id");
    receivedAtMarker = BindMarkers.indexOf(insert, "received_at");
    topicMarker = BindMarkers.indexOf(insert, "topic");
    reasonMarker = BindMarkers.indexOf(insert, "reason");
    payloadMarker = BindMarkers.indexOf(insert, "payload");
    ttlMarker = BindMarkers.indexOf(insert, BindMarkers.TTL);
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
                .boundStatementBuilder()
                .setUuid(deviceIdMarker, deadLetter.deviceId().value())
                .setUuid(idMarker, Uuids.timeBased())
                .setLong(receivedAtMarker, deadLetter.receivedAt())
                .setString(topicMarker, deadLetter.topic())
                .setString(reasonMarker, deadLetter.reason())
                .setByteBuffer(payloadMarker, ByteBuffer.wrap(deadLetter.payload().clone()))
                .setInt(ttlMarker, ttl)
                .setIdempotence(true)
                .setConsistencyLevel(config.writeConsistency())
                .build()),
        1,
        1);
  }

  @Override
  public CompletionStage<List<StoredDeadLetter>> list(DeviceId deviceId, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1");
    }
    return StoreErrors.translated(
        AsyncRows.collect(
            session.executeAsync(select.bind(deviceId.value(), limit)),
            row -> deadLetter(deviceId, row),
            limit));
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
