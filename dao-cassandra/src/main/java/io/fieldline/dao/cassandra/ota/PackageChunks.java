package io.fieldline.dao.cassandra.ota;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.ota.OtaRows.DataRef;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * {@code ota_package_data}: the chunks of each upload into a package, one partition per package
 * clustered by upload id and chunk index. Only the upload named by the package row's {@code
 * data_id} is the package's data; the chunks of an upload that lost or failed are removed by its
 * uploader (and in any case with the package's partition when the package is deleted).
 *
 * <p>Thread-safe; stages complete on driver I/O threads and fail with driver exceptions (the store
 * translates them).
 */
final class PackageChunks {

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final ConsistencyLevel consistency;
  private final PreparedStatement insert;
  private final PreparedStatement deleteUpload;
  private final PreparedStatement deleteAll;
  private final PreparedStatement selectRange;

  /** Prepares the statements; blocks. */
  PackageChunks(
      CqlSession session, String keyspace, WriteLimiter limiter, ConsistencyLevel consistency) {
    this.session = session;
    this.limiter = limiter;
    this.consistency = consistency;
    String table = keyspace + ".ota_package_data";
    insert =
        session.prepare(
            "INSERT INTO "
                + table
                + " (package_id, data_id, chunk_index, data) VALUES (?, ?, ?, ?)");
    deleteUpload =
        session.prepare("DELETE FROM " + table + " WHERE package_id = ? AND data_id = ?");
    deleteAll = session.prepare("DELETE FROM " + table + " WHERE package_id = ?");
    selectRange =
        session.prepare(
            "SELECT chunk_index, data FROM "
                + table
                + " WHERE package_id = ? AND data_id = ? AND chunk_index >= ? AND chunk_index <="
                + " ?");
  }

  CompletionStage<Void> write(UUID packageId, UUID uploadId, int index, byte[] bytes) {
    return write(
            insert.bind(packageId, uploadId, index, ByteBuffer.wrap(bytes)).setIdempotent(true))
        .thenApply(rs -> null);
  }

  /** Removes the chunks of one upload. */
  CompletionStage<Void> deleteUpload(UUID packageId, UUID uploadId) {
    return write(deleteUpload.bind(packageId, uploadId).setIdempotent(true)).thenApply(rs -> null);
  }

  /** Removes every chunk of the package, of every upload. */
  CompletionStage<Void> deleteAll(UUID packageId) {
    return write(deleteAll.bind(packageId).setIdempotent(true)).thenApply(rs -> null);
  }

  /**
   * Up to {@code length} bytes of the data from {@code offset} (fewer at its end, none past it),
   * read from the chunks that hold them in one query.
   */
  CompletionStage<byte[]> read(UUID packageId, DataRef data, long offset, int length) {
    if (offset >= data.size()) {
      return java.util.concurrent.CompletableFuture.completedFuture(new byte[0]);
    }
    long end = Math.min(data.size(), offset + length);
    int first = (int) (offset / data.chunkSize());
    int last = (int) ((end - 1) / data.chunkSize());
    byte[] out = new byte[(int) (end - offset)];
    return AsyncRows.forEach(
            session.executeAsync(
                selectRange.bind(packageId, data.dataId(), first, last).setIdempotent(true)),
            row -> copy(row, data.chunkSize(), offset, out))
        .thenApply(done -> out);
  }

  // The part of one chunk that falls in [offset, offset + out.length).
  private static void copy(Row row, int chunkSize, long offset, byte[] out) {
    long chunkStart = (long) row.getInt("chunk_index") * chunkSize;
    ByteBuffer bytes = row.getByteBuffer("data");
    if (bytes == null) {
      return;
    }
    long from = Math.max(offset, chunkStart);
    long to = Math.min(offset + out.length, chunkStart + bytes.remaining());
    if (from >= to) {
      return;
    }
    ByteBuffer slice = bytes.duplicate();
    slice.position(slice.position() + (int) (from - chunkStart));
    slice.get(out, (int) (from - offset), (int) (to - from));
  }

  private CompletionStage<com.datastax.oss.driver.api.core.cql.AsyncResultSet> write(
      Statement<?> statement) {
    Statement<?> ready = statement.setConsistencyLevel(consistency);
    return limiter.submit(() -> session.executeAsync(ready));
  }
}
