package io.fieldline.dao.cassandra.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.common.query.PageData;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.StoredRpc;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CassandraRpcStoreIT extends CassandraTestBase {

  private WriteLimiter limiter;
  private CassandraRpcStore store;
  private DeviceId device;

  @Override
  protected String extraConfig() {
    return "fieldline.cassandra.rpc-ttl = 2 hours";
  }

  @BeforeAll
  void createStore() {
    limiter = WriteLimiter.from(config);
    store = new CassandraRpcStore(session, config, limiter);
  }

  @BeforeEach
  void newDevice() {
    device = DeviceId.random();
  }

  private StoredRpc request(long createdTime, RpcStatus status) {
    return new StoredRpc(
        new ToDeviceRpc(
            UUID.randomUUID(),
            device,
            "setGpio",
            "{\"pin\":" + createdTime + "}",
            false,
            true,
            10_000,
            createdTime + 60_000,
            2,
            "{\"by\":\"test\"}"),
        createdTime,
        status,
        null);
  }

  private StoredRpc saved(long createdTime, RpcStatus status) {
    StoredRpc rpc = request(createdTime, status);
    await(store.save(rpc));
    return rpc;
  }

  private boolean move(StoredRpc rpc, Set<RpcStatus> from, RpcStatus to, String response) {
    return await(store.transition(device, rpc.request().id(), from, to, response, null));
  }

  private RpcStatus statusOf(StoredRpc rpc) {
    return await(store.find(rpc.request().id())).orElseThrow().status();
  }

  @Test
  void should_read_back_every_field_when_found_by_id() {
    StoredRpc rpc = saved(1_000, RpcStatus.QUEUED);

    assertThat(await(store.find(rpc.request().id()))).contains(rpc);
    assertThat(await(store.find(UUID.randomUUID()))).isEmpty();
  }

  @Test
  void should_move_through_its_life_and_refuse_to_go_back_when_reports_arrive_late() {
    StoredRpc rpc = saved(1_000, RpcStatus.QUEUED);

    assertThat(move(rpc, EnumSet.of(RpcStatus.QUEUED), RpcStatus.SENT, null)).isTrue();
    assertThat(move(rpc, EnumSet.of(RpcStatus.SENT), RpcStatus.DELIVERED, null)).isTrue();
    assertThat(
            move(
                rpc,
                EnumSet.of(RpcStatus.SENT, RpcStatus.DELIVERED),
                RpcStatus.SUCCESSFUL,
                "{\"ok\":true}"))
        .isTrue();
    // A late PUBACK of the same request: it was SENT once, it is SUCCESSFUL now.
    assertThat(move(rpc, EnumSet.of(RpcStatus.SENT), RpcStatus.DELIVERED, null)).isFalse();

    StoredRpc now = await(store.find(rpc.request().id())).orElseThrow();
    assertThat(now.status()).isEqualTo(RpcStatus.SUCCESSFUL);
    assertThat(now.responseJson()).isEqualTo("{\"ok\":true}");
    assertThat(now.request()).isEqualTo(rpc.request());
  }

  @Test
  void should_let_exactly_one_of_two_concurrent_transitions_win() {
    StoredRpc rpc = saved(1_000, RpcStatus.SENT);
    Set<RpcStatus> sent = EnumSet.of(RpcStatus.SENT);

    CompletableFuture<Boolean> answered =
        store
            .transition(device, rpc.request().id(), sent, RpcStatus.SUCCESSFUL, "{}", null)
            .toCompletableFuture();
    CompletableFuture<Boolean> timedOut =
        store
            .transition(device, rpc.request().id(), sent, RpcStatus.TIMEOUT, null, null)
            .toCompletableFuture();

    assertThat(List.of(await(answered), await(timedOut))).containsExactlyInAnyOrder(true, false);
    assertThat(statusOf(rpc)).isEqualTo(await(answered) ? RpcStatus.SUCCESSFUL : RpcStatus.TIMEOUT);
  }

  @Test
  void should_update_retries_and_keep_the_response_when_given_none() {
    StoredRpc rpc = saved(1_000, RpcStatus.SENT);
    UUID id = rpc.request().id();

    assertThat(
            await(
                store.transition(
                    device, id, EnumSet.of(RpcStatus.SENT), RpcStatus.QUEUED, "first", 1)))
        .isTrue();
    assertThat(
            await(
                store.transition(
                    device, id, EnumSet.of(RpcStatus.QUEUED), RpcStatus.SENT, null, null)))
        .isTrue();

    StoredRpc now = await(store.find(id)).orElseThrow();
    assertThat(now.request().retries()).isEqualTo(1);
    assertThat(now.responseJson()).isEqualTo("first");
    assertThat(now.status()).isEqualTo(RpcStatus.SENT);
  }

  @Test
  void should_refuse_a_transition_of_an_unknown_request() {
    assertThat(
            await(
                store.transition(
                    device,
                    UUID.randomUUID(),
                    EnumSet.allOf(RpcStatus.class),
                    RpcStatus.SENT,
                    null,
                    null)))
        .isFalse();
  }

  @Test
  void should_list_newest_first_page_by_page_with_totals_and_a_status_filter() {
    List<StoredRpc> all = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      all.add(saved(1_000 + i, i % 2 == 0 ? RpcStatus.QUEUED : RpcStatus.SUCCESSFUL));
    }
    List<StoredRpc> newestFirst = new ArrayList<>(all);
    Collections.reverse(newestFirst);

    PageData<StoredRpc> first = await(store.list(device, Optional.empty(), 3, 0));
    PageData<StoredRpc> last = await(store.list(device, Optional.empty(), 3, 2));
    PageData<StoredRpc> beyond = await(store.list(device, Optional.empty(), 3, 3));
    PageData<StoredRpc> queued = await(store.list(device, Optional.of(RpcStatus.QUEUED), 3, 1));

    assertThat(first.data()).containsExactlyElementsOf(newestFirst.subList(0, 3));
    assertThat(first.totalElements()).isEqualTo(7);
    assertThat(first.totalPages()).isEqualTo(3);
    assertThat(first.hasNext()).isTrue();
    assertThat(last.data()).containsExactly(newestFirst.get(6));
    assertThat(last.hasNext()).isFalse();
    assertThat(beyond.data()).isEmpty();
    // QUEUED: created at 1006, 1004, 1002, 1000; page 1 of size 3 holds the oldest.
    assertThat(queued.data()).containsExactly(all.get(0));
    assertThat(queued.totalElements()).isEqualTo(4);
    assertThat(queued.totalPages()).isEqualTo(2);
    assertThat(await(store.list(DeviceId.random(), Optional.empty(), 3, 0)).totalElements())
        .isZero();
  }

  @Test
  void should_give_queued_and_sent_requests_oldest_first_when_pending() {
    StoredRpc newer = saved(3_000, RpcStatus.QUEUED);
    StoredRpc older = saved(1_000, RpcStatus.QUEUED);
    StoredRpc sent = saved(2_000, RpcStatus.SENT);
    saved(500, RpcStatus.DELIVERED);
    saved(400, RpcStatus.EXPIRED);

    assertThat(await(store.pending(device))).containsExactly(older, sent, newer);
  }

  @Test
  void should_delete_by_id_once() {
    StoredRpc rpc = saved(1_000, RpcStatus.QUEUED);

    assertThat(await(store.delete(rpc.request().id()))).isTrue();

    assertThat(await(store.find(rpc.request().id()))).isEmpty();
    assertThat(await(store.pending(device))).isEmpty();
    assertThat(await(store.delete(rpc.request().id()))).isFalse();
    assertThat(await(store.delete(UUID.randomUUID()))).isFalse();
  }

  @Test
  void should_accept_the_same_request_twice_and_refuse_another_under_its_id() {
    StoredRpc rpc = saved(1_000, RpcStatus.QUEUED);
    await(store.save(rpc));
    StoredRpc other = new StoredRpc(rpc.request().withRetries(0), 9_000, RpcStatus.QUEUED, null);

    Throwable failure = store.save(other).toCompletableFuture().handle((ok, error) -> error).join();

    assertThat(failure).isInstanceOf(IllegalArgumentException.class);
    assertThat(await(store.find(rpc.request().id()))).contains(rpc);
  }

  @Test
  void should_write_rows_with_the_configured_retention() {
    StoredRpc rpc = saved(1_000, RpcStatus.QUEUED);
    move(rpc, EnumSet.of(RpcStatus.QUEUED), RpcStatus.SENT, null);

    int rowTtl =
        session
            .execute(
                "SELECT TTL(method), TTL(status) FROM "
                    + keyspace
                    + ".rpc_requests WHERE device_id = ? AND id = ?",
                device.value(),
                rpc.request().id())
            .one()
            .getInt(0);
    int idTtl =
        session
            .execute(
                "SELECT TTL(device_id) FROM " + keyspace + ".rpc_by_id WHERE id = ?",
                rpc.request().id())
            .one()
            .getInt(0);

    int twoHours = (int) Duration.ofHours(2).toSeconds();
    assertThat(rowTtl).isBetween(twoHours - 60, twoHours);
    assertThat(idTtl).isBetween(twoHours - 60, twoHours);
  }

  @Test
  void should_forget_requests_once_their_retention_passed() {
    CassandraConfig short1s =
        CassandraConfig.from(
            ConfigFactory.parseString("fieldline.cassandra.rpc-ttl = 1 second").withFallback(root));
    CassandraRpcStore shortLived = new CassandraRpcStore(session, short1s, limiter);
    StoredRpc rpc = request(1_000, RpcStatus.QUEUED);
    await(shortLived.save(rpc));
    // A status change late in the request's life rewrites its columns with a fresh TTL: what it
    // wrote may outlive the rest of the row briefly, and must not read as a request.
    await(
        shortLived.transition(
            device, rpc.request().id(), EnumSet.of(RpcStatus.QUEUED), RpcStatus.SENT, null, 5));

    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> await(shortLived.find(rpc.request().id())).isEmpty());
    assertThat(await(shortLived.pending(device))).isEmpty();
  }
}
