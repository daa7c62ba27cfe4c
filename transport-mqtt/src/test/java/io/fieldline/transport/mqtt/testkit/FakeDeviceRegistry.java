package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceRegistry;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A token → device map. Lookups complete at once, unless {@link #holdLookups()} was called: then
 * each lookup returns a future the test completes ({@link #pendingLookups()}). Thread-safe.
 */
public final class FakeDeviceRegistry implements DeviceRegistry {

  private final Map<String, Device> byToken = new ConcurrentHashMap<>();
  private final List<CompletableFuture<Optional<Device>>> pending = new CopyOnWriteArrayList<>();
  private volatile boolean hold;
  private volatile RuntimeException failure;

  public Device add(String token) {
    Device device = new Device(DeviceId.random(), "device-" + token, "default", token, 0L);
    byToken.put(token, device);
    return device;
  }

  /** From now on, lookups stay pending until the test completes them. */
  public void holdLookups() {
    hold = true;
  }

  /** From now on, lookups fail with {@code error}. */
  public void failLookups(RuntimeException error) {
    failure = error;
  }

  public List<CompletableFuture<Optional<Device>>> pendingLookups() {
    return pending;
  }

  /** Completes every held lookup with what the map says about {@code token}. */
  public void releaseLookups(String token) {
    for (CompletableFuture<Optional<Device>> lookup : pending) {
      lookup.complete(Optional.ofNullable(byToken.get(token)));
    }
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    if (failure != null) {
      return CompletableFuture.failedFuture(failure);
    }
    if (hold) {
      CompletableFuture<Optional<Device>> lookup = new CompletableFuture<>();
      pending.add(lookup);
      return lookup;
    }
    return CompletableFuture.completedFuture(Optional.ofNullable(byToken.get(token)));
  }

  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    return CompletableFuture.completedFuture(Optional.empty());
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    return CompletableFuture.completedFuture(Optional.empty());
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    throw new UnsupportedOperationException();
  }

  @Override
  public CompletionStage<Device> create(String name, String type, Optional<String> accessToken) {
    throw new UnsupportedOperationException();
  }

  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    throw new UnsupportedOperationException();
  }

  @Override
  public CompletionStage<java.util.Optional<io.fieldline.common.device.Device>> findByName(
      String name) {
    throw new UnsupportedOperationException("findByName");
  }

  @Override
  public CompletionStage<java.util.Optional<io.fieldline.common.device.Device>> update(
      io.fieldline.common.device.DeviceUpdate update) {
    throw new UnsupportedOperationException("update");
  }

  @Override
  public CompletionStage<io.fieldline.common.query.PageData<io.fieldline.common.device.Device>>
      page(io.fieldline.common.query.DevicePageQuery query) {
    throw new UnsupportedOperationException("page");
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    throw new UnsupportedOperationException();
  }
}
