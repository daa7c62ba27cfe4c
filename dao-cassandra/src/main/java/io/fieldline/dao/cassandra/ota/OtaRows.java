package io.fieldline.dao.cassandra.ota;

import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.ota.ChecksumAlgorithm;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageType;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The columns of an {@code ota_packages} row and their reading. A row the REST API never wrote
 * completely (a package whose delete stopped half-way, a column of an unknown name) reads as no
 * package rather than failing the listing. Stateless.
 */
final class OtaRows {

  /** Every column {@link #read} needs, in a SELECT's order. */
  static final String COLUMNS =
      "id, created_time, title, version, type, tag, device_profile_id, additional_info,"
          + " file_name, content_type, data_size, chunk_size, checksum_algorithm, checksum,"
          + " data_id, deleting";

  private OtaRows() {}

  /** The package of a row; empty for a row missing its identity or of an unknown type. */
  static Optional<OtaPackageInfo> read(Row row) {
    UUID id = row.getUuid("id");
    String title = row.getString("title");
    String version = row.getString("version");
    OtaPackageType type = enumOf(OtaPackageType.class, row.getString("type"));
    if (id == null || title == null || version == null || type == null) {
      return Optional.empty();
    }
    return Optional.of(
        new OtaPackageInfo(
            new OtaPackageId(id),
            row.getLong("created_time"),
            title,
            version,
            type,
            row.getString("tag"),
            row.getUuid("device_profile_id"),
            row.getString("additional_info"),
            data(row)));
  }

  /** Where a package's data lies; null while it has none. */
  static @Nullable DataRef dataRef(Row row) {
    UUID dataId = row.getUuid("data_id");
    if (dataId == null || row.isNull("data_size") || row.getInt("chunk_size") < 1) {
      return null;
    }
    return new DataRef(dataId, row.getLong("data_size"), row.getInt("chunk_size"));
  }

  /** Whether a delete of the row's package is under way. */
  static boolean deleting(Row row) {
    return !row.isNull("deleting") && row.getBoolean("deleting");
  }

  private static @Nullable OtaPackageData data(Row row) {
    String checksum = row.getString("checksum");
    ChecksumAlgorithm algorithm =
        enumOf(ChecksumAlgorithm.class, row.getString("checksum_algorithm"));
    if (checksum == null || algorithm == null || dataRef(row) == null) {
      return null;
    }
    return new OtaPackageData(
        String.valueOf(row.getString("file_name")),
        String.valueOf(row.getString("content_type")),
        row.getLong("data_size"),
        algorithm,
        checksum);
  }

  private static <E extends Enum<E>> @Nullable E enumOf(Class<E> type, @Nullable String name) {
    if (name == null) {
      return null;
    }
    try {
      return Enum.valueOf(type, name);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * The stored data of a package: the upload whose chunks it is, its size and its chunk size.
   *
   * @param dataId the upload id the chunks are clustered under
   * @param size bytes of data
   * @param chunkSize bytes per chunk (the last chunk may be shorter)
   */
  record DataRef(UUID dataId, long size, int chunkSize) {}
}
