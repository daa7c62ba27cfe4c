package io.fieldline.transport.mqtt.gateway;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * Devices in memory, by id, with the lookups and changes a gateway session uses: by token
 * (CONNECT), by name, create and update. Creations complete at once unless {@link #holdCreations()}
 * was called (then the test releases each, {@link #heldCreations()}); they can be made to fail, or
 * to find their name taken by a device "another gateway" created just before. Thread-safe.
 */
final class InMemoryRegistry implements DeviceRegistry {

  /** A creation the test holds: release it to create the device. */
  record HeldCreation(
      String name,
      String type,
      @Nullable String additionalInfoJson,
      CompletableFuture<Device> done) {}

  private final Map<DeviceId, Device> devices = new ConcurrentHashMap<>();
  private final List<String> created = new CopyOnWriteArrayList<>();
  private final List<List<String>> bulkCreations = new CopyOnWriteArrayList<>();
  private final List<DeviceUpdate> updates = new CopyOnWriteArrayList<>();
  private final List<HeldCreation> held = new CopyOnWriteArrayList<>();
  private volatile boolean holdCreations;
  private volatile @Nullable RuntimeException createFailure;
  private volatile @Nullable String takenOnCreate;

  Device add(String name, String token, @Nullable String additionalInfoJson) {
    Device device =
        new Device(DeviceId.random(), name, "default", token, 0L, null, additionalInfoJson);
    devices.put(device.id(), device);
    return device;
  }

  Device gateway(String name, String token) {
    return add(name, token, "{\"gateway\":true}");
  }

  Optional<Device> named(String name) {
    return devices.values().stream().filter(d -> d.name().equals(name)).findFirst();
  }

  /** Names created through {@link #create} or {@link #createAll}, in order. */
  List<String> created() {
    return created;
  }

  /** The names of each {@link #createAll} call, in order. */
  List<List<String>> bulkCreations() {
    return bulkCreations;
  }

  List<DeviceUpdate> updates() {
    return updates;
  }

  void holdCreations() {
    holdCreations = true;
  }

  List<HeldCreation> heldCreations() {
    return held;
  }

  /** Completes the held creation {@code index}: the device is created now. */
  void release(int index) {
    HeldCreation creation = held.get(index);
    creation
        .done()
        .complete(store(creation.name(), creation.type(), creation.additionalInfoJson()));
  }

  void failCreations(RuntimeException error) {
    createFailure = error;
  }

  /** The next create of {@code name} finds it taken by a device created just before. */
  void takeOnCreate(String name) {
    takenOnCreate = name;
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    return CompletableFuture.completedFuture(
        devices.values().stream().filter(d -> d.hasAccessToken(token)).findFirst());
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
    return CompletableFuture.completedFuture(Optional.ofNullable(devices.get(id)));
  }

  @Override
  public CompletionStage<Optional<Device>> findByName(String name) {
    return CompletableFuture.completedFuture(named(name));
  }

  @Override
  public CompletionStage<Device> create(String name, String type, Optional<String> accessToken) {
    return create(name, type, (String) null);
  }

  @Override
  public List<CompletionStage<Device>> createAll(List<NewDevice> devices) {
    List<String> names = devices.stream().map(NewDevice::name).toList();
    if (names.stream().distinct().count() != names.size()) {
      throw new IllegalArgumentException("a device name is given twice: " + names);
    }
    bulkCreations.add(names);
    return devices.stream()
        .map(device -> create(device.name(), device.type(), device.additionalInfoJson()))
        .toList();
  }

  private CompletionStage<Device> create(
      String name, String type, @Nullable String additionalInfoJson) {
    RuntimeException failure = createFailure;
    if (failure != null) {
      return CompletableFuture.failedFuture(failure);
    }
    if (name.equals(takenOnCreate)) {
      takenOnCreate = null;
      add(name, "other-" + name, null);
    }
    if (named(name).isPresent()) {
      return CompletableFuture.failedFuture(
          new DeviceConflictException("device name '" + name + "' is taken"));
    }
    if (holdCreations) {
      CompletableFuture<Device> done = new CompletableFuture<>();
      held.add(new HeldCreation(name, type, additionalInfoJson, done));
      return done;
    }
    return CompletableFuture.completedFuture(store(name, type, additionalInfoJson));
  }

  private Device store(String name, String type, @Nullable String additionalInfoJson) {
    Device device =
        new Device(DeviceId.random(), name, type, "token-" + name, 1L, null, additionalInfoJson);
    devices.put(device.id(), device);
    created.add(name);
    return device;
  }

  @Override
  public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
    updates.add(update);
    Device was = devices.get(update.id());
    if (was == null) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    Device next =
        new Device(
            was.id(),
            update.name(),
            update.type(),
            was.accessToken(),
            was.createdTime(),
            update.label(),
            update.additionalInfoJson());
    devices.put(next.id(), next);
    return CompletableFuture.completedFuture(Optional.of(next));
  }

  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    throw new UnsupportedOperationException("list");
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    return CompletableFuture.completedFuture(devices.remove(id) != null);
  }

  @Override
  public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
    throw new UnsupportedOperationException("page");
  }
}
