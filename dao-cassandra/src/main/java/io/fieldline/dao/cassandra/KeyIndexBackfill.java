package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fills {@code ts_kv_keys} (schema version 2) from {@code ts_kv_latest} for data written before it
 * existed, so that keys and latest values stay readable after the upgrade. Run once, right after
 * version 2 was applied; blocks (startup only). Idempotent: rerunning writes the same rows.
 */
public final class KeyIndexBackfill {

  private static final Logger LOG = LoggerFactory.getLogger(KeyIndexBackfill.class);
  private static final int KEY_INDEX_VERSION = 2;

  private KeyIndexBackfill() {}

  /**
   * Backfills when {@code appliedNow} (the versions the migrator just applied) holds version 2.
   *
   * @return rows written
   */
  public static long runIfJustCreated(
      CqlSession session, CassandraConfig config, List<Integer> appliedNow) {
    if (!appliedNow.contains(KEY_INDEX_VERSION)) {
      return 0;
    }
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
              .bind(Objects.requireNonNull(row.getUuid(0)), row.getString(1), part)
              .setIdempotent(true));
      written++;
    }
    if (written > 0) {
      LOG.info("[cql] key index of keyspace {} filled from ts_kv_latest: {} rows", ks, written);
    }
    return written;
  }
}
