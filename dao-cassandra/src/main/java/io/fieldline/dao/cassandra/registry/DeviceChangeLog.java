package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.uuid.Uuids;
import io.fieldline.common.DeviceId;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.FailureEpisodes;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code device_changes}: one row per device created, updated or deleted on any node, so that each
 * node's {@link DeviceDirectory} can catch up with the others by reading what changed since it last
 * looked. Rows sit in hourly partitions ({@code hour} = the change's time truncated to the hour),
 * clustered by a time-based UUID, and expire after {@link #RETENTION} (the table's default TTL).
 *
 * <p>A change is recorded after the registry's write completed, whatever its outcome (one that
 * failed may have been applied): a reader that sees the row and reads the device finds it as
 * changed. Recording never fails its caller: a failed record is counted ({@link #unrecorded}) and
 * logged once per failure episode, and other nodes then miss that change until the device changes
 * again or their directory reloads. Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceChangeLog {

  /** How long changes are kept (the {@code default_time_to_live} of schema version 4). */
  static final Duration RETENTION = Duration.ofDays(1);

  private static final Logger LOG = LoggerFactory.getLogger(DeviceChangeLog.class);
  private static final long HOUR_MS = Duration.ofHours(1).toMillis();

  /**
   * A recorded change.
   *
   * @param changed its time-based id; {@link Uuids#unixTimestamp} is when it was recorded
   * @param device the device that changed
   */
  record Change(UUID changed, UUID device) {}

  private final CqlSession session;
  private final PreparedStatement insert;
  private final PreparedStatement selectSince;
  private final FailureEpisodes episodes = new FailureEpisodes(LOG, "[cql] device change log", 60);
  private final LongAdder unrecorded = new LongAdder();

  /** Prepares the statements; blocks. */
  DeviceChangeLog(CqlSession session, String keyspace) {
    this.session = session;
    insert =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".device_changes (hour, changed, device_id) VALUES (?, ?, ?)");
    selectSince =
        session.prepare(
            "SELECT changed, device_id FROM "
                + keyspace
                + ".device_changes WHERE hour = ? AND changed >= ?");
  }

  /** The hourly partition of a change recorded at {@code millis}. */
  static long hourOf(long millis) {
    return Math.floorDiv(millis, HOUR_MS) * HOUR_MS;
  }

  /** Records that {@code device} changed; completes once written, or once the write failed. */
  CompletionStage<Void> record(DeviceId device) {
    UUID changed = Uuids.timeBased();
    CompletableFuture<Void> done = new CompletableFuture<>();
    session
        .executeAsync(
            insert
                .bind(hourOf(Uuids.unixTimestamp(changed)), changed, device.value())
                .setIdempotent(true))
        .whenComplete(
            (rs, error) -> {
              if (error != null) {
                unrecorded.increment();
                episodes.onFailure(StoreErrors.translate(error));
              } else {
                episodes.onSuccess();
              }
              done.complete(null);
            });
    return done;
  }

  /**
   * The changes recorded at or after {@code fromMillis} (by the recording node's clock), in every
   * hourly partition up to the one of {@code toMillis}; read in parallel, one query per hour.
   */
  CompletionStage<List<Change>> since(long fromMillis, long toMillis) {
    UUID from = Uuids.startOf(fromMillis);
    List<CompletableFuture<List<Change>>> reads = new ArrayList<>();
    for (long hour = hourOf(fromMillis); hour <= hourOf(toMillis); hour += HOUR_MS) {
      reads.add(
          AsyncRows.collect(
                  session.executeAsync(selectSince.bind(hour, from)),
                  row ->
                      new Change(
                          Objects.requireNonNull(row.getUuid(0)),
                          Objects.requireNonNull(row.getUuid(1))),
                  Integer.MAX_VALUE)
              .toCompletableFuture());
    }
    return CompletableFuture.allOf(reads.toArray(CompletableFuture<?>[]::new))
        .thenApply(done -> reads.stream().flatMap(read -> read.join().stream()).toList());
  }

  /** Changes that could not be recorded (other nodes learn of them late). */
  long unrecorded() {
    return unrecorded.sum();
  }
}
