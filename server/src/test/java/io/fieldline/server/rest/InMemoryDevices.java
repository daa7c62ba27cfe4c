package io.fieldline.server.rest;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A {@link DeviceRegistry} in a map, with the port's documented semantics (unique names and tokens,
 * update keeping id, creation time and token, pages sorted with ties broken by name then id).
 * Creation times count up from 1000 so that the order of creation is the order of {@code
 * createdTime}. Thread-safe enough for one HTTP test at a time (changes are synchronized).
 */
final class InMemoryDevices implements DeviceRegistry {

  private final Map<DeviceId, Device> devices = new ConcurrentHashMap<>();
  private final AtomicLong clock = new AtomicLong(1000);

  Device add(String name, String type) {
    return create(name, type, Optional.empty()).toCompletableFuture().join();
  }

  Device get(DeviceId id) {
    return devices.get(id);
  }

  @Override
  public synchronized CompletionStage<Device> create(
      String name, String type, Optional<String> accessToken) {
    String token = accessToken.orElseGet(() -> UUID.randomUUID().toString());
    if (find(d -> d.name().equals(name)).isPresent()
        || find(d -> d.hasAccessToken(token)).isPresent()) {
      return CompletableFuture.failedFuture(new DeviceConflictException("name or token taken"));
    }
    Device device = new Device(DeviceId.random(), name, type, token, clock.getAndIncrement());
    devices.put(device.id(), device);
    return CompletableFuture.completedFuture(device);
  }

  @Override
  public synchronized CompletionStage<Optional<Device>> update(DeviceUpdate update) {
    Device old = devices.get(update.id());
    if (old == null) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    if (find(d -> d.name().equals(update.name()) && !d.id().equals(update.id())).isPresent()) {
      return CompletableFuture.failedFuture(
          new DeviceConflictException("device name " + update.name() + " is taken"));
    }
    Device changed =
        new Device(
            old.id(),
            update.name(),
            update.type(),
            old.accessToken(),
            old.createdTime(),
            update.label(),
            update.additionalInfoJson());
    devices.put(changed.id(), changed);
    return CompletableFuture.completedFuture(Optional.of(changed));
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    return CompletableFuture.completedFuture(Optional.ofNullable(devices.get(id)));
  }

  @Override
  public CompletionStage<Optional<Device>> findByName(String name) {
    return CompletableFuture.completedFuture(find(d -> d.name().equals(name)));
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    return CompletableFuture.completedFuture(find(d -> d.hasAccessToken(token)));
  }

  @Override
  public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
    Comparator<Device> order =
        switch (query.sortProperty()) {
          case NAME -> Comparator.comparing(Device::name);
          case CREATED_TIME -> Comparator.comparingLong(Device::createdTime);
          case TYPE -> Comparator.comparing(Device::type);
          case LABEL ->
              Comparator.comparing(
                  Device::label, Comparator.nullsFirst(Comparator.<String>naturalOrder()));
        };
    if (query.sortOrder() == SortOrder.DESC) {
      order = order.reversed();
    }
    order = order.thenComparing(Device::name).thenComparing(d -> d.id().value());
    String text = query.textSearch().map(t -> t.toLowerCase(Locale.ROOT)).orElse("");
    List<Device> matching =
        devices.values().stream()
            .filter(d -> d.name().toLowerCase(Locale.ROOT).contains(text))
            .sorted(order)
            .toList();
    int from = (int) Math.min((long) query.page() * query.pageSize(), matching.size());
    int to = Math.min(from + query.pageSize(), matching.size());
    return CompletableFuture.completedFuture(
        PageData.of(matching.subList(from, to), matching.size(), query.pageSize(), query.page()));
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    return CompletableFuture.completedFuture(devices.remove(id) != null);
  }

  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    throw new UnsupportedOperationException("list: the REST API pages with page()");
  }

  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    throw new UnsupportedOperationException("findByBasicCredentials");
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    throw new UnsupportedOperationException("findByCertificate");
  }

  private Optional<Device> find(Function<Device, Boolean> test) {
    return devices.values().stream().filter(test::apply).findFirst();
  }
}
