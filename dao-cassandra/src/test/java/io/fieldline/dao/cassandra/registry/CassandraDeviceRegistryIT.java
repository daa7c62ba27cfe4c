package io.fieldline.dao.cassandra.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.dao.cassandra.CassandraTestBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CassandraDeviceRegistryIT extends CassandraTestBase {

  private CassandraDeviceRegistry registry;

  @Override
  protected String extraConfig() {
    // bcrypt's lowest cost: the tests check behaviour, not cost.
    return "fieldline.cassandra.password-hashing.cost = 4";
  }

  @BeforeAll
  void createRegistry() {
    registry = new CassandraDeviceRegistry(session, config);
  }

  @AfterAll
  void closeRegistry() {
    registry.close();
  }

  @BeforeEach
  void cleanTables() {
    truncate("devices", "device_by_token", "device_by_name", "device_by_credentials");
  }

  private Device create(String name, Optional<String> token) {
    return await(registry.create(name, "sensor", token));
  }

  private static Throwable failureOf(CompletionStage<?> stage) {
    try {
      stage.toCompletableFuture().join();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("expected a failure");
  }

  @Test
  void should_find_the_device_by_token_and_id_when_created_with_a_generated_token() {
    Device device = create("pump-1", Optional.empty());

    assertThat(device.accessToken()).hasSize(20).matches("[A-Za-z0-9]{20}");
    assertThat(device.type()).isEqualTo("sensor");
    assertThat(await(registry.findByToken(device.accessToken()))).contains(device);
    assertThat(await(registry.findById(device.id()))).contains(device);
    assertThat(await(registry.findByToken("unknown-token"))).isEmpty();
    assertThat(await(registry.findById(DeviceId.random()))).isEmpty();
  }

  @Test
  void should_fail_with_conflict_and_keep_the_first_device_when_the_name_is_taken() {
    Device first = create("pump-1", Optional.of("token-a"));

    Throwable failure = failureOf(registry.create("pump-1", "other", Optional.of("token-b")));

    assertThat(failure).isInstanceOf(DeviceConflictException.class);
    assertThat(await(registry.findByToken("token-b"))).isEmpty();
    assertThat(await(registry.findByToken("token-a"))).contains(first);
  }

  @Test
  void should_fail_with_conflict_and_release_the_name_when_the_token_is_taken() {
    create("pump-1", Optional.of("token-a"));

    Throwable failure = failureOf(registry.create("pump-2", "sensor", Optional.of("token-a")));

    assertThat(failure).isInstanceOf(DeviceConflictException.class);
    assertThat(await(registry.list(10, Optional.empty())))
        .extracting(Device::name)
        .containsExactly("pump-1");
    assertThat(create("pump-2", Optional.of("token-b")).name()).isEqualTo("pump-2");
  }

  @Test
  void should_finish_a_half_created_device_when_created_again_with_the_same_name() {
    // What a create leaves behind when it dies after reserving the name (or whose timed-out
    // lightweight transactions were applied after all): name and token rows, no devices row.
    UUID orphan = UUID.randomUUID();
    session.execute(
        "INSERT INTO " + keyspace + ".device_by_name (bucket, name, device_id) VALUES (0, ?, ?)",
        "pump-7",
        orphan);
    session.execute(
        "INSERT INTO " + keyspace + ".device_by_token (access_token, device_id) VALUES (?, ?)",
        "token-7",
        orphan);

    Device device = create("pump-7", Optional.of("token-7"));

    assertThat(device.id().value()).isEqualTo(orphan);
    assertThat(await(registry.findByToken("token-7"))).contains(device);
    assertThat(await(registry.findById(device.id()))).contains(device);
    assertThat(failureOf(registry.create("pump-7", "sensor", Optional.of("token-8"))))
        .as("a finished device keeps its name")
        .isInstanceOf(DeviceConflictException.class);
  }

  @Test
  void should_create_many_at_once_with_their_info_when_some_names_are_taken_or_half_created() {
    Device taken = create("child-005", Optional.of("token-taken"));
    UUID orphan = UUID.randomUUID();
    session.execute(
        "INSERT INTO " + keyspace + ".device_by_name (bucket, name, device_id) VALUES (0, ?, ?)",
        "child-007",
        orphan);
    String info = "{\"lastConnectedGateway\":\"" + UUID.randomUUID() + "\"}";
    // More than one batch of names (DeviceCreation.MAX_BATCH).
    List<DeviceRegistry.NewDevice> wanted = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      wanted.add(new DeviceRegistry.NewDevice(String.format("child-%03d", i), "thermo", info));
    }

    List<CompletionStage<Device>> created = registry.createAll(wanted);

    assertThat(created).hasSize(150);
    assertThat(failureOf(created.get(5))).isInstanceOf(DeviceConflictException.class);
    assertThat(await(registry.findByName("child-005"))).contains(taken);
    assertThat(await(created.get(7)).id().value())
        .as("the half-way create finished")
        .isEqualTo(orphan);
    for (int i = 0; i < 150; i++) {
      if (i == 5) {
        continue;
      }
      Device device = await(created.get(i));
      assertThat(device.name()).isEqualTo(wanted.get(i).name());
      assertThat(device.type()).isEqualTo("thermo");
      assertThat(device.additionalInfoJson()).isEqualTo(info);
      assertThat(await(registry.findByName(device.name()))).contains(device);
      assertThat(await(registry.findByToken(device.accessToken()))).contains(device);
    }
    assertThat(await(registry.list(1000, Optional.empty()))).hasSize(150);
  }

  @Test
  void should_give_each_name_one_device_when_two_bulk_creations_race_for_the_same_names() {
    List<DeviceRegistry.NewDevice> wanted = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      wanted.add(new DeviceRegistry.NewDevice("raced-" + i, "default", null));
    }
    List<CompletionStage<Device>> first = registry.createAll(wanted);
    List<CompletionStage<Device>> second = registry.createAll(wanted);
    for (CompletionStage<Device> result : first) {
      result.exceptionally(error -> null).toCompletableFuture().join();
    }
    for (CompletionStage<Device> result : second) {
      result.exceptionally(error -> null).toCompletableFuture().join();
    }

    for (int i = 0; i < wanted.size(); i++) {
      Device stored = await(registry.findByName(wanted.get(i).name())).orElseThrow();
      int winners = 0;
      for (CompletionStage<Device> result : List.of(first.get(i), second.get(i))) {
        try {
          assertThat(result.toCompletableFuture().join()).isEqualTo(stored);
          winners++;
        } catch (CompletionException e) {
          assertThat(e.getCause()).isInstanceOf(DeviceConflictException.class);
        }
      }
      assertThat(winners).as(wanted.get(i).name()).isPositive();
      assertThat(await(registry.findByToken(stored.accessToken()))).contains(stored);
    }
    assertThat(await(registry.list(1000, Optional.empty()))).hasSize(60);
  }

  @Test
  void should_page_through_devices_in_name_order_when_listing() {
    for (String name : List.of("d", "b", "e", "a", "c")) {
      create(name, Optional.empty());
    }

    List<Device> first = await(registry.list(2, Optional.empty()));
    List<Device> second = await(registry.list(2, Optional.of(first.get(1).name())));
    List<Device> third = await(registry.list(2, Optional.of(second.get(1).name())));

    assertThat(first).extracting(Device::name).containsExactly("a", "b");
    assertThat(second).extracting(Device::name).containsExactly("c", "d");
    assertThat(third).extracting(Device::name).containsExactly("e");
  }

  @Test
  void should_scan_every_device_up_to_the_limit() {
    List<Device> created = new ArrayList<>();
    for (String name : List.of("d", "b", "e", "a", "c")) {
      created.add(create(name, Optional.empty()));
    }

    assertThat(registry.scan(100)).containsExactlyInAnyOrderElementsOf(created);
    assertThat(registry.scan(3)).hasSize(3).isSubsetOf(created);
  }

  @Test
  void should_remove_every_row_when_deleted() {
    Device device = create("pump-1", Optional.of("token-a"));

    assertThat(await(registry.delete(device.id()))).isTrue();

    assertThat(await(registry.findByToken("token-a"))).isEmpty();
    assertThat(await(registry.findById(device.id()))).isEmpty();
    assertThat(await(registry.list(10, Optional.empty()))).isEmpty();
    assertThat(await(registry.delete(device.id()))).isFalse();
    assertThat(create("pump-1", Optional.of("token-a")).name()).isEqualTo("pump-1");
  }

  @Test
  void should_rename_keeping_id_creation_time_and_token_and_release_the_old_name() {
    Device device = create("pump-1", Optional.of("token-a"));

    Optional<Device> updated =
        await(
            registry.update(
                new DeviceUpdate(device.id(), "pump-2", "valve", "Main", "{\"floor\":2}")));

    Device expected =
        new Device(
            device.id(),
            "pump-2",
            "valve",
            "token-a",
            device.createdTime(),
            "Main",
            "{\"floor\":2}");
    assertThat(updated).contains(expected);
    assertThat(await(registry.findById(device.id()))).contains(expected);
    assertThat(await(registry.findByToken("token-a"))).contains(expected);
    assertThat(await(registry.findByName("pump-2"))).contains(expected);
    assertThat(await(registry.findByName("pump-1"))).isEmpty();
    assertThat(create("pump-1", Optional.of("token-b")).name()).isEqualTo("pump-1");
  }

  @Test
  void should_change_label_type_and_info_without_touching_the_name() {
    Device device = create("pump-1", Optional.of("token-a"));
    await(registry.update(new DeviceUpdate(device.id(), "pump-1", "sensor", "A", "{}")));

    Optional<Device> updated =
        await(registry.update(new DeviceUpdate(device.id(), "pump-1", " ", null, null)));

    assertThat(updated.orElseThrow().label()).isNull();
    assertThat(updated.orElseThrow().additionalInfoJson()).isNull();
    assertThat(updated.orElseThrow().type()).as("blank type, as on create").isEqualTo("default");
    assertThat(await(registry.findByName("pump-1"))).isEqualTo(updated);
  }

  @Test
  void should_fail_with_conflict_and_change_nothing_when_renamed_to_another_devices_name() {
    Device first = create("pump-1", Optional.of("token-a"));
    Device second = create("pump-2", Optional.of("token-b"));

    Throwable failure =
        failureOf(registry.update(new DeviceUpdate(first.id(), "pump-2", "sensor", "x", null)));

    assertThat(failure).isInstanceOf(DeviceConflictException.class);
    assertThat(await(registry.findById(first.id()))).contains(first);
    assertThat(await(registry.findByName("pump-2"))).contains(second);
    assertThat(await(registry.findByName("pump-1"))).contains(first);
  }

  @Test
  void should_let_exactly_one_of_two_devices_take_a_free_name_when_renamed_at_once() {
    Device first = create("pump-1", Optional.empty());
    Device second = create("pump-2", Optional.empty());

    CompletionStage<Optional<Device>> a =
        registry.update(new DeviceUpdate(first.id(), "pump-9", "sensor", null, null));
    CompletionStage<Optional<Device>> b =
        registry.update(new DeviceUpdate(second.id(), "pump-9", "sensor", null, null));
    List<Boolean> succeeded = new ArrayList<>();
    for (CompletionStage<Optional<Device>> rename : List.of(a, b)) {
      succeeded.add(rename.handle((ok, error) -> error == null).toCompletableFuture().join());
    }

    assertThat(succeeded).containsExactlyInAnyOrder(true, false);
    Device winner = await(registry.findByName("pump-9")).orElseThrow();
    Device loser = winner.id().equals(first.id()) ? second : first;
    assertThat(await(registry.findById(loser.id()))).contains(loser);
  }

  @Test
  void should_take_back_a_name_it_still_claims_when_renamed_to_it() {
    Device device = create("pump-1", Optional.empty());
    // What a rename that died after reserving its new name leaves: a claim its row does not have.
    session.execute(
        "INSERT INTO " + keyspace + ".device_by_name (bucket, name, device_id) VALUES (0, ?, ?)",
        "pump-7",
        device.id().value());
    assertThat(await(registry.findByName("pump-7"))).as("the row decides").isEmpty();

    Optional<Device> updated =
        await(registry.update(new DeviceUpdate(device.id(), "pump-7", "sensor", null, null)));

    assertThat(updated.orElseThrow().name()).isEqualTo("pump-7");
    assertThat(await(registry.findByName("pump-7"))).isEqualTo(updated);
  }

  @Test
  void should_answer_empty_when_updating_a_device_that_does_not_exist() {
    assertThat(
            await(registry.update(new DeviceUpdate(DeviceId.random(), "ghost", "t", null, null))))
        .isEmpty();
    assertThat(await(registry.findByName("ghost"))).isEmpty();
  }

  @Test
  void should_not_serve_the_old_device_from_the_cache_after_an_update() {
    Device device = create("pump-1", Optional.of("token-a"));
    CachingDeviceRegistry cache = new CachingDeviceRegistry(registry, config.deviceCache());
    assertThat(await(cache.findByToken("token-a"))).contains(device);

    await(cache.update(new DeviceUpdate(device.id(), "pump-2", "valve", "L", null)));

    assertThat(await(cache.findByToken("token-a")).orElseThrow().name()).isEqualTo("pump-2");
  }

  @Test
  void should_serve_repeat_lookups_without_cassandra_when_cached() {
    Device device = create("pump-1", Optional.of("token-a"));
    CountingRegistry counting = new CountingRegistry(registry);
    CachingDeviceRegistry cache = new CachingDeviceRegistry(counting, config.deviceCache());

    for (int i = 0; i < 5; i++) {
      assertThat(await(cache.findByToken("token-a"))).contains(device);
      assertThat(await(cache.findByToken("bad-token"))).isEmpty();
    }

    assertThat(counting.lookups.get()).isEqualTo(2);
    assertThat(cache.stats().hits()).isEqualTo(8);

    await(cache.delete(device.id()));
    assertThat(await(cache.findByToken("token-a"))).isEmpty();
    assertThat(counting.lookups.get()).isEqualTo(3);
  }

  /** Counts the lookups that reach the real registry. */
  private static final class CountingRegistry implements DeviceRegistry, DeviceCredentialsStore {
    final CassandraDeviceRegistry delegate;
    final AtomicInteger lookups = new AtomicInteger();

    CountingRegistry(CassandraDeviceRegistry delegate) {
      this.delegate = delegate;
    }

    @Override
    public CompletionStage<Optional<Device>> findByToken(String token) {
      lookups.incrementAndGet();
      return delegate.findByToken(token);
    }

    @Override
    public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
      lookups.incrementAndGet();
      return delegate.findByBasicCredentials(login);
    }

    @Override
    public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
      lookups.incrementAndGet();
      return delegate.findByCertificate(sha256Fingerprint);
    }

    @Override
    public CompletionStage<Optional<StoredCredentials>> findCredentials(DeviceId device) {
      return delegate.findCredentials(device);
    }

    @Override
    public CompletionStage<Optional<StoredCredentials>> replaceCredentials(
        DeviceId device, DeviceCredentials credentials) {
      return delegate.replaceCredentials(device, credentials);
    }

    @Override
    public CompletionStage<Device> createWithCredentials(
        String name, String type, DeviceCredentials credentials) {
      return delegate.createWithCredentials(name, type, credentials);
    }

    @Override
    public CompletionStage<Optional<Device>> findById(DeviceId id) {
      return delegate.findById(id);
    }

    @Override
    public CompletionStage<Device> create(String name, String type, Optional<String> token) {
      return delegate.create(name, type, token);
    }

    @Override
    public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
      return delegate.list(pageSize, afterName);
    }

    @Override
    public CompletionStage<Optional<Device>> findByName(String name) {
      return delegate.findByName(name);
    }

    @Override
    public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
      return delegate.update(update);
    }

    @Override
    public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
      return delegate.page(query);
    }

    @Override
    public CompletionStage<Boolean> delete(DeviceId id) {
      return delegate.delete(id);
    }
  }
}
