package io.fieldline.dao.cassandra.schema;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.fieldline.dao.cassandra.CassandraConfig;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fills {@code ts_kv_keys} (schema version 2) from {@code ts_kv_latest} for data written before it
 * existed, so that keys and latest values stay readable after the upgrade. The data step of version
 * 2 ({@link #dataSteps}): the migrator records version 2 only after it completed, so a failed or
 * interrupted fill runs again at the next start. Idempotent; blocks (startup only); reads {@code
 * ts_kv_latest} in pages, so its cost grows with devices x keys, not with history.
 */
public final class KeyIndexBackfill {

  private static final Logger LOG = LoggerFactory.getLogger(KeyIndexBackfill.class);

  /** The schema version whose data step this is. */
  public static final int VERSION = 2;

  private KeyIndexBackfill() {}

  /** The data steps to pass to {@code SchemaMigrator.migrate}. */
  public static Map<Integer, Runnable> dataSteps(CqlSession session, CassandraConfig config) {
    return Map.of(VERSION, () -> run(session, config));
  }

  /**
   * Copies every (device, key, bucket of its latest value) of {@code ts_kv_latest} into {@code
   * ts_kv_keys}.
   *
   * @return rows written
   */
  public static long run(CqlSession session, CassandraConfig config) {
    String ks = config.keyspace();
    PreparedStatement insert =
        session.prepare(
            "INSERT INTO " + ks + ".ts_kv_keys (device_id, key, part) VALUES (?, ?, ?)");
    long written = 0;
    for (Row row :
        session.execute(
            SimpleStatement.newInstance("SELECT device_id, key, ts FROM " + ks + ".ts_kv_latest")
                .setPageSize(1000))) {
      long part = config.tsPartitioning().partitionOf(row.getLong(2));
      session.execute(
          insert
              .boundStatementBuilder()
              .setUuid("device_id", Objects.requireNonNull(row.getUuid(0)))
              .setString("key", Objects.requireNonNull(row.getString(1)))
              .setLong("part", part)
              .setIdempotence(true)
              .build());
      written++;
    }
    if (written > 0) {
      LOG.info("[cql] key index of keyspace {} filled from ts_kv_latest: {} rows", ks, written);
    }
    return written;
  }
}
