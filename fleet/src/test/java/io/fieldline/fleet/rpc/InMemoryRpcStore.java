package io.fieldline.fleet.rpc;

import io.fieldline.common.DeviceId;
import io.fieldline.common.query.PageData;
import io.fieldline.common.rpc.PersistentRpcStore;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.StoredRpc;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/** Persistent requests in memory, with the store's guarded transitions. Thread-safe. */
final class InMemoryRpcStore implements PersistentRpcStore {

  private final Map<UUID, StoredRpc> rows = new LinkedHashMap<>();

  synchronized Optional<StoredRpc> get(UUID id) {
    return Optional.ofNullable(rows.get(id));
  }

  @Override
  public synchronized CompletionStage<Void> save(StoredRpc rpc) {
    rows.put(rpc.request().id(), rpc);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized CompletionStage<Boolean> transition(
      DeviceId device,
      UUID id,
      Set<RpcStatus> from,
      RpcStatus status,
      @Nullable String responseJson,
      @Nullable Integer retriesLeft) {
    StoredRpc row = rows.get(id);
    if (row == null || !from.contains(row.status())) {
      return CompletableFuture.completedFuture(false);
    }
    ToDeviceRpc request =
        retriesLeft == null ? row.request() : row.request().withRetries(retriesLeft);
    rows.put(
        id,
        new StoredRpc(
            request,
            row.createdTime(),
            status,
            responseJson == null ? row.responseJson() : responseJson));
    return CompletableFuture.completedFuture(true);
  }

  @Override
  public synchronized CompletionStage<Optional<StoredRpc>> find(UUID id) {
    return CompletableFuture.completedFuture(Optional.ofNullable(rows.get(id)));
  }

  @Override
  public synchronized CompletionStage<PageData<StoredRpc>> list(
      DeviceId device, Optional<RpcStatus> status, int pageSize, int page) {
    List<StoredRpc> matching =
        rows.values().stream()
            .filter(rpc -> rpc.request().deviceId().equals(device))
            .filter(rpc -> status.map(s -> s == rpc.status()).orElse(true))
            .sorted(Comparator.comparingLong(StoredRpc::createdTime).reversed())
            .toList();
    int from = Math.min(matching.size(), page * pageSize);
    return CompletableFuture.completedFuture(
        PageData.of(
            matching.subList(from, Math.min(matching.size(), from + pageSize)),
            matching.size(),
            pageSize,
            page));
  }

  @Override
  public synchronized CompletionStage<List<StoredRpc>> pending(DeviceId device, int limit) {
    return CompletableFuture.completedFuture(
        rows.values().stream()
            .filter(rpc -> rpc.request().deviceId().equals(device))
            .filter(rpc -> rpc.status() == RpcStatus.QUEUED || rpc.status() == RpcStatus.SENT)
            .sorted(Comparator.comparingLong(StoredRpc::createdTime))
            .limit(limit)
            .toList());
  }

  @Override
  public synchronized CompletionStage<Integer> countOpen(DeviceId device, long now) {
    return CompletableFuture.completedFuture(
        (int)
            rows.values().stream()
                .filter(rpc -> rpc.request().deviceId().equals(device))
                .filter(rpc -> !rpc.status().isFinal())
                .filter(rpc -> rpc.request().expirationTime() + rpc.request().timeoutMillis() > now)
                .count());
  }

  @Override
  public synchronized CompletionStage<Boolean> delete(UUID id) {
    return CompletableFuture.completedFuture(rows.remove(id) != null);
  }
}
