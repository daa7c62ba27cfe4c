package io.fieldline.common.rpc;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A persistent server-side RPC as stored.
 *
 * @param request the request (its {@code retries} is what is left)
 * @param createdTime when it was taken, epoch milliseconds
 * @param status where it is in its life
 * @param responseJson the device's answer (two-way, {@code SUCCESSFUL}) or a short error text
 *     ({@code FAILED}), null otherwise
 */
public record StoredRpc(
    ToDeviceRpc request, long createdTime, RpcStatus status, @Nullable String responseJson) {

  public StoredRpc {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(status, "status");
  }
}
