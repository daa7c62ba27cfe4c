package io.fieldline.common.rpc;

import io.fieldline.common.DeviceId;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A server-side RPC to a device, as ThingsBoard's REST API takes it ({@code POST
 * /api/rpc/{oneway|twoway}/{deviceId}}). The device receives {@code {"method":…,"params":…}} on
 * {@code v1/devices/me/rpc/request/{n}}, where {@code n} is chosen by the session delivering it.
 *
 * @param id the request's id ({@code rpcId} of a persistent request)
 * @param deviceId the device
 * @param method the method name
 * @param paramsJson the {@code params}, as JSON text ({@code {}} when none were given)
 * @param oneway true: no answer expected
 * @param persistent true: stored, delivered when the device next subscribes, status kept
 * @param timeoutMillis how long a sent request waits for the device's answer (two-way), or to be
 *     delivered (one-way)
 * @param expirationTime epoch milliseconds after which the request is no longer delivered
 * @param retries how many more times a persistent request is sent after a delivery that timed out
 * @param additionalInfoJson the caller's {@code additionalInfo}, JSON text, kept with a persistent
 *     request; null when none
 */
public record ToDeviceRpc(
    UUID id,
    DeviceId deviceId,
    String method,
    String paramsJson,
    boolean oneway,
    boolean persistent,
    long timeoutMillis,
    long expirationTime,
    int retries,
    @Nullable String additionalInfoJson) {

  public ToDeviceRpc {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(paramsJson, "paramsJson");
    if (timeoutMillis <= 0) {
      throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
    }
    if (retries < 0) {
      throw new IllegalArgumentException("retries must not be negative: " + retries);
    }
  }

  /** The same request with {@code retries} left. */
  public ToDeviceRpc withRetries(int retries) {
    return new ToDeviceRpc(
        id,
        deviceId,
        method,
        paramsJson,
        oneway,
        persistent,
        timeoutMillis,
        expirationTime,
        retries,
        additionalInfoJson);
  }
}
