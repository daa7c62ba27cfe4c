package io.fieldline.dao.cassandra.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.Device;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.MqttBasicLogin;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CachingDeviceRegistryTest {

  /** An in-memory registry whose token lookups stay pending until the test completes them. */
  private static final class FakeRegistry implements DeviceRegistry {
    final Map<String, Device> byToken = new ConcurrentHashMap<>();
    final List<CompletableFuture<Optional<Device>>> pending = new ArrayList<>();
    final List<String> lookups = new ArrayList<>();
    boolean manual;

    @Override
    public CompletionStage<Optional<Device>> findByToken(String token) {
      lookups.add(token);
      CompletableFuture<Optional<Device>> result = new CompletableFuture<>();
      if (manual) {
        pending.add(result);
      } else {
        result.complete(Optional.ofNullable(byToken.get(token)));
      }
      return result;
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
      return CompletableFuture.completedFuture(
          byToken.values().stream().filter(d -> d.id().equals(id)).findFirst());
    }

    @Override
    public CompletionStage<Device> create(String name, String type, Optional<String> token) {
      Device device = new Device(DeviceId.random(), name, type, token.orElse("gen"), 1L);
      byToken.put(device.accessToken(), device);
      return CompletableFuture.completedFuture(device);
    }

    @Override
    public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
      return CompletableFuture.completedFuture(List.copyOf(byToken.values()));
    }

    @Override
    public CompletionStage<Boolean> delete(DeviceId id) {
      return CompletableFuture.completedFuture(byToken.values().removeIf(d -> d.id().equals(id)));
    }
  }

  private final FakeRegistry backend = new FakeRegistry();
  private final AtomicLong now = new AtomicLong(1_000);
  private final CachingDeviceRegistry cache =
      new CachingDeviceRegistry(backend, Duration.ofNanos(100), Duration.ofNanos(10), 3, now::get);

  private Optional<Device> find(String token) {
    return cache.findByToken(token).toCompletableFuture().join();
  }

  @Test
  void should_serve_repeat_lookups_from_memory_when_the_device_is_known() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();

    assertThat(find("tok")).contains(device);
    assertThat(find("tok")).contains(device);
    assertThat(find("tok")).contains(device);

    assertThat(backend.lookups).containsExactly("tok");
    assertThat(cache.stats().hits()).isEqualTo(2);
    assertThat(cache.stats().misses()).isEqualTo(1);
  }

  @Test
  void should_query_again_when_the_positive_ttl_expired() {
    backend.create("d", "t", Optional.of("tok"));
    find("tok");

    now.addAndGet(100);
    find("tok");

    assertThat(backend.lookups).containsExactly("tok", "tok");
  }

  @Test
  void should_remember_unknown_tokens_only_for_the_negative_ttl() {
    assertThat(find("bad")).isEmpty();
    assertThat(find("bad")).isEmpty();
    assertThat(backend.lookups).containsExactly("bad");

    now.addAndGet(10);
    find("bad");

    assertThat(backend.lookups).containsExactly("bad", "bad");
  }

  @Test
  void should_share_one_query_when_lookups_of_a_token_overlap() {
    backend.manual = true;
    CompletableFuture<Optional<Device>> first = cache.findByToken("tok").toCompletableFuture();
    CompletableFuture<Optional<Device>> second = cache.findByToken("tok").toCompletableFuture();
    assertThat(first).isNotDone();

    Device device = new Device(DeviceId.random(), "d", "t", "tok", 1L);
    backend.pending.get(0).complete(Optional.of(device));

    assertThat(backend.lookups).containsExactly("tok");
    assertThat(first).isCompletedWithValue(Optional.of(device));
    assertThat(second).isCompletedWithValue(Optional.of(device));
  }

  @Test
  void should_not_cache_failures_when_the_backend_fails() {
    backend.manual = true;
    CompletableFuture<Optional<Device>> failed = cache.findByToken("tok").toCompletableFuture();
    backend.pending.get(0).completeExceptionally(new IllegalStateException("down"));
    assertThat(failed).isCompletedExceptionally();

    cache.findByToken("tok");

    assertThat(backend.lookups).containsExactly("tok", "tok");
  }

  @Test
  void should_evict_the_device_when_it_is_deleted() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    find("tok");

    cache.delete(device.id()).toCompletableFuture().join();

    assertThat(find("tok")).isEmpty();
    assertThat(backend.lookups).containsExactly("tok", "tok");
  }

  @Test
  void should_forget_a_cached_unknown_when_the_token_is_created() {
    assertThat(find("new")).isEmpty();

    Device device = cache.create("d", "t", Optional.of("new")).toCompletableFuture().join();

    assertThat(find("new")).contains(device);
  }

  @Test
  void should_serve_a_device_created_on_this_node_without_a_lookup() {
    Device device = cache.create("d", "t", Optional.of("fresh")).toCompletableFuture().join();

    assertThat(find("fresh")).contains(device);
    assertThat(backend.lookups).isEmpty();
  }

  @Test
  void should_serve_preloaded_devices_without_a_lookup_until_the_ttl_expires() {
    Device first = backend.create("a", "t", Optional.of("tok-a")).toCompletableFuture().join();
    Device second = backend.create("b", "t", Optional.of("tok-b")).toCompletableFuture().join();

    assertThat(cache.preload(List.of(first, second))).isEqualTo(2);

    assertThat(find("tok-a")).contains(first);
    assertThat(find("tok-b")).contains(second);
    assertThat(backend.lookups).isEmpty();
    now.addAndGet(100);
    assertThat(find("tok-a")).contains(first);
    assertThat(backend.lookups).containsExactly("tok-a");
  }

  @Test
  void should_preload_at_most_max_size_devices() {
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      devices.add(
          backend.create("d" + i, "t", Optional.of("tok" + i)).toCompletableFuture().join());
    }

    assertThat(cache.preload(devices)).isEqualTo(3);
    assertThat(cache.stats().size()).isEqualTo(3);
  }

  @Test
  void should_stay_within_max_size_when_many_tokens_are_looked_up() {
    for (int i = 0; i < 10; i++) {
      find("t" + i);
    }

    assertThat(cache.stats().size()).isLessThanOrEqualTo(3);
  }
}
