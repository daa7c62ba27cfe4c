package io.fieldline.common.rpc;

import io.fieldline.common.DeviceId;
import io.fieldline.common.query.PageData;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Persistent server-side RPCs, kept until their retention passes ({@code
 * fieldline.cassandra.rpc-ttl}). Every method is asynchronous; stages fail with {@link
 * io.fieldline.common.StoreException} when storage cannot answer.
 */
public interface PersistentRpcStore {

  /** Stores a new request (status {@link RpcStatus#QUEUED}). */
  CompletionStage<Void> save(StoredRpc rpc);

  /**
   * Moves a request to {@code status} (with {@code responseJson}, and {@code retriesLeft} when not
   * null) only if its current status is one of {@code from}: concurrent reports of one request (a
   * late PUBACK after the answer) cannot move it backwards.
   *
   * @return whether the request was in one of {@code from} and was moved
   */
  CompletionStage<Boolean> transition(
      DeviceId device,
      UUID id,
      Set<RpcStatus> from,
      RpcStatus status,
      @Nullable String responseJson,
      @Nullable Integer retriesLeft);

  CompletionStage<Optional<StoredRpc>> find(UUID id);

  /**
   * One page of a device's requests, newest first, optionally only those in {@code status}.
   *
   * @param page zero-based page number
   */
  CompletionStage<PageData<StoredRpc>> list(
      DeviceId device, Optional<RpcStatus> status, int pageSize, int page);

  /** The device's requests still to deliver ({@code QUEUED} and {@code SENT}), oldest first. */
  default CompletionStage<List<StoredRpc>> pending(DeviceId device) {
    return pending(device, Integer.MAX_VALUE);
  }

  /**
   * The oldest {@code limit} of the device's requests still to deliver ({@code QUEUED} and {@code
   * SENT}), oldest first.
   */
  CompletionStage<List<StoredRpc>> pending(DeviceId device, int limit);

  /**
   * How many of the device's requests are still open at {@code now}: in a status that is not final
   * ({@code QUEUED}, {@code SENT}, {@code DELIVERED}) and not past their expiration time plus their
   * timeout (after which nothing can answer them).
   */
  CompletionStage<Integer> countOpen(DeviceId device, long now);

  /** Deletes a request; completes with false when there was none. */
  CompletionStage<Boolean> delete(UUID id);
}
