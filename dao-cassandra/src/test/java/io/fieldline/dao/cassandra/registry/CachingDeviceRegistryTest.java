package io.fieldline.dao.cassandra.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class CachingDeviceRegistryTest {

  /**
   * An in-memory registry whose lookups stay pending until the test completes them ({@code
   * manual}). Basic logins match a client id, a user name and a password in clear.
   */
  private static final class FakeRegistry implements DeviceRegistry, DeviceCredentialsStore {
    final Map<String, Device> byToken = new ConcurrentHashMap<>();
    final Map<String, Device> byCertificate = new ConcurrentHashMap<>();
    final Map<DeviceId, DeviceCredentials.MqttBasic> basic = new ConcurrentHashMap<>();
    final Map<DeviceId, Device> byId = new ConcurrentHashMap<>();
    final List<CompletableFuture<Optional<Device>>> pending = new ArrayList<>();
    final List<String> lookups = new ArrayList<>();
    boolean manual;
    // When set, replacements and deletes are applied, then fail with it (an unknown outcome).
    RuntimeException writeFailure;

    private <T> CompletionStage<T> written(T result) {
      return writeFailure == null
          ? CompletableFuture.completedFuture(result)
          : CompletableFuture.failedFuture(writeFailure);
    }

    private CompletionStage<Optional<Device>> answer(String lookup, Optional<Device> found) {
      lookups.add(lookup);
      CompletableFuture<Optional<Device>> result = new CompletableFuture<>();
      if (manual) {
        pending.add(result);
      } else {
        result.complete(found);
      }
      return result;
    }

    @Override
    public CompletionStage<Optional<Device>> findByToken(String token) {
      return answer(token, Optional.ofNullable(byToken.get(token)));
    }

    @Override
    public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
      String password =
          login.password() == null ? null : new String(login.password(), StandardCharsets.UTF_8);
      Optional<Device> found =
          basic.entrySet().stream()
              .filter(
                  e ->
                      Objects.equals(e.getValue().clientId(), login.clientId())
                          && Objects.equals(e.getValue().userName(), login.userName())
                          && Objects.equals(e.getValue().password(), password))
              .map(e -> byId.get(e.getKey()))
              .findFirst();
      return answer("basic:" + login.clientId() + "/" + login.userName(), found);
    }

    @Override
    public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
      return answer(
          "x509:" + sha256Fingerprint, Optional.ofNullable(byCertificate.get(sha256Fingerprint)));
    }

    @Override
    public CompletionStage<Optional<Device>> findById(DeviceId id) {
      return CompletableFuture.completedFuture(Optional.ofNullable(byId.get(id)));
    }

    @Override
    public CompletionStage<Device> create(String name, String type, Optional<String> token) {
      Device device = new Device(DeviceId.random(), name, type, token.orElse("gen"), 1L);
      byToken.put(Objects.requireNonNull(device.accessToken()), device);
      byId.put(device.id(), device);
      return CompletableFuture.completedFuture(device);
    }

    @Override
    public CompletionStage<Device> createWithCredentials(
        String name, String type, DeviceCredentials credentials) {
      Device device = new Device(DeviceId.random(), name, type, null, 1L);
      byId.put(device.id(), device);
      basic.put(device.id(), (DeviceCredentials.MqttBasic) credentials);
      return CompletableFuture.completedFuture(device);
    }

    @Override
    public CompletionStage<Optional<StoredCredentials>> findCredentials(DeviceId device) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<StoredCredentials>> replaceCredentials(
        DeviceId id, DeviceCredentials credentials) {
      Device old = byId.get(id);
      byToken.values().removeIf(d -> d.id().equals(id));
      byCertificate.values().removeIf(d -> d.id().equals(id));
      basic.remove(id);
      if (credentials instanceof DeviceCredentials.MqttBasic login) {
        basic.put(id, login);
      }
      return written(Optional.of(new StoredCredentials(id, old.createdTime(), credentials, "id")));
    }

    @Override
    public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
      return CompletableFuture.completedFuture(List.copyOf(byId.values()));
    }

    @Override
    public CompletionStage<Optional<Device>> findByName(String name) {
      return CompletableFuture.completedFuture(
          byId.values().stream().filter(d -> d.name().equals(name)).findFirst());
    }

    @Override
    public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
      Device old = byId.get(update.id());
      if (old == null) {
        return written(Optional.empty());
      }
      Device updated =
          new Device(
              old.id(),
              update.name(),
              update.type(),
              old.accessToken(),
              old.createdTime(),
              update.label(),
              update.additionalInfoJson());
      byId.put(updated.id(), updated);
      if (updated.accessToken() != null) {
        byToken.put(updated.accessToken(), updated);
      }
      return written(Optional.of(updated));
    }

    // Name order only: enough for a decorator that passes listings through.
    @Override
    public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
      List<Device> all = byId.values().stream().sorted(Comparator.comparing(Device::name)).toList();
      int from = Math.min(all.size(), query.page() * query.pageSize());
      List<Device> data = all.subList(from, Math.min(all.size(), from + query.pageSize()));
      return CompletableFuture.completedFuture(
          PageData.of(data, all.size(), query.pageSize(), query.page()));
    }

    @Override
    public CompletionStage<Boolean> delete(DeviceId id) {
      byToken.values().removeIf(d -> d.id().equals(id));
      return written(byId.remove(id) != null);
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

  private static MqttBasicLogin login(String clientId, String userName, String password) {
    return new MqttBasicLogin(clientId, userName, password.getBytes(StandardCharsets.UTF_8));
  }

  private Optional<Device> find(MqttBasicLogin login) {
    return cache.findByBasicCredentials(login).toCompletableFuture().join();
  }

  private Device basicDevice(String clientId, String userName, String password) {
    return backend
        .createWithCredentials(
            "b-" + clientId, "t", new DeviceCredentials.MqttBasic(clientId, userName, password))
        .toCompletableFuture()
        .join();
  }

  @Test
  void should_check_a_basic_password_once_when_the_same_login_connects_again() {
    Device device = basicDevice("c", "u", "right");

    for (int i = 0; i < 3; i++) {
      assertThat(find(login("c", "u", "right"))).contains(device);
    }

    assertThat(backend.lookups).containsExactly("basic:c/u");
  }

  @Test
  void should_never_answer_a_wrong_password_with_a_cached_success() {
    Device device = basicDevice("c", "u", "right");
    assertThat(find(login("c", "u", "right"))).contains(device);

    assertThat(find(login("c", "u", "wrong"))).isEmpty();
    assertThat(find(login("c", "u", "wrong"))).as("the cached failure").isEmpty();
    assertThat(find(new MqttBasicLogin("c", "u", null))).as("no password at all").isEmpty();

    assertThat(backend.lookups).containsExactly("basic:c/u", "basic:c/u", "basic:c/u");
    assertThat(find(login("c", "u", "right"))).contains(device);
  }

  @Test
  void should_check_a_wrong_password_again_when_the_negative_ttl_expired() {
    basicDevice("c", "u", "right");
    find(login("c", "u", "wrong"));

    now.addAndGet(10);
    find(login("c", "u", "wrong"));

    assertThat(backend.lookups).containsExactly("basic:c/u", "basic:c/u");
  }

  @Test
  void should_not_keep_the_password_when_a_login_is_cached() {
    basicDevice("c", "u", "s3cret-password");
    find(login("c", "u", "s3cret-password"));

    assertThat(new LoginKeys().of(login("c", "u", "s3cret-password")).toString())
        .doesNotContain("s3cret-password");
    assertThat(new LoginKeys().of(login("c", "u", "p")))
        .as("a key drawn per cache: its MACs are its own")
        .isNotEqualTo(new LoginKeys().of(login("c", "u", "p")));
  }

  @Test
  void should_refuse_the_old_password_when_the_credential_was_replaced_on_this_node() {
    Device device = basicDevice("c", "u", "old");
    assertThat(find(login("c", "u", "old"))).contains(device);

    cache
        .replaceCredentials(device.id(), new DeviceCredentials.MqttBasic("c", "u", "new"))
        .toCompletableFuture()
        .join();

    assertThat(find(login("c", "u", "old"))).isEmpty();
    assertThat(find(login("c", "u", "new"))).contains(device);
  }

  @Test
  void should_forget_every_lookup_of_the_device_when_another_node_revokes_it() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    backend.byCertificate.put("ab12", device);
    find("tok");
    cache.findByCertificate("ab12").toCompletableFuture().join();
    Device other = backend.create("o", "t", Optional.of("other")).toCompletableFuture().join();
    find("other");
    // The change itself happened elsewhere: only the revocation reaches this node.
    backend.byToken.remove("tok");
    backend.byCertificate.remove("ab12");

    cache.forget(device.id());

    assertThat(find("tok")).isEmpty();
    assertThat(cache.findByCertificate("ab12").toCompletableFuture().join()).isEmpty();
    assertThat(find("other")).as("other devices stay cached").contains(other);
    assertThat(backend.lookups).containsExactly("tok", "x509:ab12", "other", "tok", "x509:ab12");
  }

  @Test
  void should_forget_cached_unknowns_when_a_device_is_revoked() {
    assertThat(find("future-token")).isEmpty();
    Device device =
        backend.create("d", "t", Optional.of("future-token")).toCompletableFuture().join();

    cache.forget(device.id());

    assertThat(find("future-token")).contains(device);
  }

  @Test
  void should_ask_again_when_the_credential_changed_while_the_lookup_ran() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    backend.manual = true;
    CompletableFuture<Optional<Device>> lookup = cache.findByToken("tok").toCompletableFuture();

    cache.forget(device.id());
    backend.pending.get(0).complete(Optional.of(device)); // read before the change

    assertThat(lookup).as("not answered with what was read before the change").isNotDone();
    backend.pending.get(1).complete(Optional.empty());
    assertThat(lookup).isCompletedWithValue(Optional.empty());
    assertThat(backend.lookups).containsExactly("tok", "tok");
  }

  @Test
  void should_not_cache_a_lookup_when_its_device_is_forgotten_between_its_read_and_its_answer() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    AtomicReference<Runnable> onClockRead = new AtomicReference<>(() -> {});
    CachingDeviceRegistry hooked =
        new CachingDeviceRegistry(
            backend,
            Duration.ofNanos(100),
            Duration.ofNanos(10),
            3,
            () -> {
              onClockRead.getAndSet(() -> {}).run();
              return now.get();
            });
    backend.manual = true;
    CompletableFuture<Optional<Device>> lookup = hooked.findByToken("tok").toCompletableFuture();
    // A completed lookup reads the clock for its expiry after checking for a forget and before it
    // is answered: the credential changes, and this cache is told, in that gap.
    onClockRead.set(
        () -> {
          backend.byToken.remove("tok");
          hooked.forget(device.id());
        });

    backend.pending.get(0).complete(Optional.of(device)); // read before the change

    assertThat(lookup).as("its waiters get what it read").isCompletedWithValue(Optional.of(device));
    backend.manual = false;
    assertThat(hooked.findByToken("tok").toCompletableFuture().join()).as("not cached").isEmpty();
    assertThat(backend.lookups).containsExactly("tok", "tok");
  }

  @Test
  void should_not_share_a_running_lookup_with_lookups_made_after_a_forget() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    backend.manual = true;
    cache.findByToken("tok");

    cache.forget(device.id());
    CompletableFuture<Optional<Device>> after = cache.findByToken("tok").toCompletableFuture();

    assertThat(backend.lookups).as("a query of its own").containsExactly("tok", "tok");
    backend.pending.get(1).complete(Optional.empty());
    assertThat(after).isCompletedWithValue(Optional.empty());
  }

  @Test
  void should_forget_the_device_when_a_replacement_fails_with_an_unknown_outcome() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    assertThat(find("tok")).contains(device);
    StoreException timeout = new StoreException(StoreException.Kind.TIMEOUT, "timed out");
    backend.writeFailure = timeout;

    CompletableFuture<Optional<StoredCredentials>> replaced =
        cache
            .replaceCredentials(device.id(), new DeviceCredentials.AccessToken("tok-2"))
            .toCompletableFuture();

    assertThat(replaced).isCompletedExceptionally();
    assertThatThrownBy(replaced::join).hasCause(timeout);
    assertThat(find("tok")).as("the replacement was applied after all").isEmpty();
  }

  @Test
  void should_forget_the_device_when_a_delete_fails_with_an_unknown_outcome() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    assertThat(find("tok")).contains(device);
    backend.writeFailure = new StoreException(StoreException.Kind.TIMEOUT, "timed out");

    assertThat(cache.delete(device.id()).toCompletableFuture()).isCompletedExceptionally();

    assertThat(find("tok")).as("the delete was applied after all").isEmpty();
  }

  @Test
  void should_serve_the_updated_device_when_looked_up_after_an_update() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    assertThat(find("tok")).contains(device);

    Optional<Device> updated =
        cache
            .update(new DeviceUpdate(device.id(), "d2", "t2", "label", "{}"))
            .toCompletableFuture()
            .join();

    assertThat(updated).isPresent();
    assertThat(find("tok")).isEqualTo(updated);
    assertThat(find("tok").orElseThrow().name()).isEqualTo("d2");
  }

  @Test
  void should_forget_the_device_when_an_update_fails_with_an_unknown_outcome() {
    Device device = backend.create("d", "t", Optional.of("tok")).toCompletableFuture().join();
    assertThat(find("tok")).contains(device);
    backend.writeFailure = new StoreException(StoreException.Kind.TIMEOUT, "timed out");

    assertThat(
            cache
                .update(new DeviceUpdate(device.id(), "d2", "t", null, null))
                .toCompletableFuture())
        .isCompletedExceptionally();

    assertThat(find("tok").orElseThrow().name()).as("applied after all").isEqualTo("d2");
  }

  @Test
  void should_pass_name_look_ups_and_listings_through() {
    backend.create("b", "t", Optional.of("tok-b")).toCompletableFuture().join();
    Device a = backend.create("a", "t", Optional.of("tok-a")).toCompletableFuture().join();

    assertThat(cache.findByName("a").toCompletableFuture().join()).contains(a);
    PageData<Device> page =
        cache
            .page(
                new DevicePageQuery(
                    1, 0, Optional.empty(), DevicePageQuery.SortProperty.NAME, SortOrder.ASC))
            .toCompletableFuture()
            .join();
    assertThat(page.data()).containsExactly(a);
    assertThat(page.totalElements()).isEqualTo(2);
  }

  @Test
  void should_preload_only_devices_that_have_an_access_token() {
    Device token = backend.create("a", "t", Optional.of("tok-a")).toCompletableFuture().join();
    Device basic = basicDevice("c", "u", "p");

    assertThat(cache.preload(List.of(token, basic))).isEqualTo(1);
    assertThat(cache.stats().size()).isEqualTo(1);
  }
}
