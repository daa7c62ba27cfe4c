package io.fieldline.dao.cassandra.rpc;

import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.StoredRpc;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.Comparator;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The columns of an {@code rpc_requests} row and how a {@link StoredRpc} maps onto them, by column
 * name. A row whose request columns are gone is no request: status changes rewrite their columns
 * with a fresh TTL, so they can outlive the rest of the row by the time between the request's
 * creation and its last status change (see {@link CassandraRpcStore}). Stateless.
 */
final class RpcRows {

  /** Every column, for a SELECT list. */
  static final String COLUMNS =
      "device_id, id, created_time, method, params, oneway, timeout_ms, expiration_time, retries,"
          + " additional_info, status, response";

  /** The columns an insert binds, as named markers. */
  static final String MARKERS =
      ":device_id, :id, :created_time, :method, :params, :oneway, :timeout_ms, :expiration_time,"
          + " :retries, :additional_info, :status, :response";

  /** The columns of a listing: enough to filter, sort and count without the payloads. */
  static final String SUMMARY_COLUMNS = "id, created_time, status, expiration_time, timeout_ms";

  /**
   * What a listing reads of each request.
   *
   * @param id the request's id
   * @param createdTime when it was taken
   * @param status its status
   * @param openUntil its expiration time plus its timeout: after it nothing can answer it
   */
  record Summary(UUID id, long createdTime, RpcStatus status, long openUntil) {

    /** Oldest first, ties by id. */
    static final Comparator<Summary> OLDEST_FIRST =
        Comparator.comparingLong(Summary::createdTime).thenComparing(Summary::id);

    /** Newest first, ties by id. */
    static final Comparator<Summary> NEWEST_FIRST =
        Comparator.comparingLong(Summary::createdTime).reversed().thenComparing(Summary::id);
  }

  private RpcRows() {}

  /** Binds every column of {@code rpc}. */
  static BoundStatementBuilder bind(BoundStatementBuilder builder, StoredRpc rpc) {
    ToDeviceRpc request = rpc.request();
    return builder
        .setUuid("device_id", request.deviceId().value())
        .setUuid("id", request.id())
        .setLong("created_time", rpc.createdTime())
        .setString("method", request.method())
        .setString("params", request.paramsJson())
        .setBoolean("oneway", request.oneway())
        .setLong("timeout_ms", request.timeoutMillis())
        .setLong("expiration_time", request.expirationTime())
        .setInt("retries", request.retries())
        .setString("additional_info", request.additionalInfoJson())
        .setString("status", rpc.status().name())
        .setString("response", rpc.responseJson());
  }

  /** The request of a row read with {@link #COLUMNS}; empty for what is left of an expired one. */
  static Optional<StoredRpc> read(Row row) {
    UUID device = row.getUuid("device_id");
    UUID id = row.getUuid("id");
    String method = row.getString("method");
    RpcStatus status = status(row.getString("status"));
    long timeout = row.getLong("timeout_ms");
    if (device == null
        || id == null
        || method == null
        || status == null
        || row.isNull("created_time")
        || timeout <= 0) {
      return Optional.empty();
    }
    String params = row.getString("params");
    ToDeviceRpc request =
        new ToDeviceRpc(
            id,
            new DeviceId(device),
            method,
            params == null ? "{}" : params,
            row.getBoolean("oneway"),
            true,
            timeout,
            row.getLong("expiration_time"),
            Math.max(0, row.getInt("retries")),
            row.getString("additional_info"));
    return Optional.of(
        new StoredRpc(request, row.getLong("created_time"), status, row.getString("response")));
  }

  /** The summary of a row read with {@link #SUMMARY_COLUMNS}; null for an expired one. */
  static @Nullable Summary summary(Row row) {
    UUID id = row.getUuid(0);
    RpcStatus status = status(row.getString(2));
    if (id == null || row.isNull(1) || status == null) {
      return null;
    }
    return new Summary(id, row.getLong(1), status, row.getLong(3) + row.getLong(4));
  }

  // A status this version does not know (written by a newer one) reads as no request.
  private static @Nullable RpcStatus status(@Nullable String name) {
    if (name == null) {
      return null;
    }
    try {
      return RpcStatus.valueOf(name);
    } catch (IllegalArgumentException unknown) {
      return null;
    }
  }
}
