package io.fieldline.fleet.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RpcService} against this node's real event path ({@link LocalDeviceEvents}) with stand-in
 * sessions: listeners that take requests and report through their callbacks as an MQTT session
 * does.
 */
class RpcServiceTest {

  private static final DeviceId DEVICE = new DeviceId(UUID.randomUUID());

  private final LocalDeviceEvents events = new LocalDeviceEvents();
  private final InMemoryRpcStore store = new InMemoryRpcStore();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private int maxPersistentPerDevice = 100;
  private RpcService service = service(device -> true, 100, 10);

  private RpcService service(Predicate<DeviceId> owns, int maxPending, int maxPerDevice) {
    return service(events, owns, maxPending, maxPerDevice);
  }

  private RpcService service(
      DeviceEvents offers, Predicate<DeviceId> owns, int maxPending, int maxPerDevice) {
    return new RpcService(
        offers,
        events,
        store,
        owns,
        new RpcConfig(
            Duration.ofSeconds(10),
            Duration.ofMinutes(10),
            maxPending,
            maxPerDevice,
            Duration.ofDays(3),
            maxPersistentPerDevice),
        meters);
  }

  @AfterEach
  void close() {
    service.close();
  }

  /** A stand-in session: takes every request offered while {@code accepting}. */
  private static final class Session {
    final List<DeviceEvent.RpcRequested> taken = new CopyOnWriteArrayList<>();
    volatile boolean accepting = true;

    boolean onEvent(DeviceEvent event) {
      if (accepting && event instanceof DeviceEvent.RpcRequested requested) {
        taken.add(requested);
        return true;
      }
      return false;
    }

    RpcCallback last() {
      return taken.get(taken.size() - 1).callback();
    }
  }

  private ToDeviceRpc rpc(boolean oneway, boolean persistent, long timeoutMillis, int retries) {
    long now = System.currentTimeMillis();
    return new ToDeviceRpc(
        UUID.randomUUID(),
        DEVICE,
        "setGpio",
        "{\"pin\":4}",
        oneway,
        persistent,
        timeoutMillis,
        now + (persistent ? 60_000 : timeoutMillis),
        retries,
        null);
  }

  private Session connect() {
    Session session = new Session();
    events.subscribe(DEVICE, session::onEvent);
    return session;
  }

  @Test
  void twoWayCallEndsWithTheDevicesAnswer() throws Exception {
    Session session = connect();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();

    assertThat(session.taken).hasSize(1);
    session.last().sent();
    session.last().delivered();
    assertThat(outcome).isNotDone();
    session.last().responded("{\"ok\":true}");

    assertThat(outcome.get(1, TimeUnit.SECONDS))
        .isEqualTo(new RpcOutcome.Responded("{\"ok\":true}"));
  }

  @Test
  void oneWayCallEndsWhenDelivered() throws Exception {
    Session session = connect();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(true, false, 5_000, 0)).toCompletableFuture();

    session.last().sent();
    assertThat(outcome).isNotDone();
    session.last().delivered();

    assertThat(outcome.get(1, TimeUnit.SECONDS)).isEqualTo(new RpcOutcome.Delivered());
  }

  @Test
  void aCallNobodyTakesTimesOutAtItsDeadlineNotBefore() {
    long start = System.nanoTime();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 300, 0)).toCompletableFuture();

    await().atMost(Duration.ofSeconds(3)).until(outcome::isDone);
    assertThat(outcome.join()).isEqualTo(new RpcOutcome.TimedOut());
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(Duration.ofMillis(290));
    assertThat(
            meters
                .counter("fieldline.rpc.calls", "kind", "lightweight", "outcome", "timedout")
                .count())
        .isEqualTo(1.0);
  }

  @Test
  void aWaitingCallIsOfferedWhenTheDeviceSubscribes() throws Exception {
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();
    Session session = connect();
    assertThat(session.taken).isEmpty();

    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));

    assertThat(session.taken).hasSize(1);
    session.last().responded("42");
    assertThat(outcome.get(1, TimeUnit.SECONDS)).isEqualTo(new RpcOutcome.Responded("42"));
  }

  @Test
  void aRequestGivenUpIsOfferedAgainAtOnceToASessionSubscribedElsewhere() throws Exception {
    Session first = connect();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();
    first.accepting = false;
    Session second = connect(); // the device moved: its new session subscribed first

    first.last().undelivered("the device connected elsewhere");

    assertThat(second.taken).hasSize(1);
    second.last().responded("{}");
    assertThat(outcome.get(1, TimeUnit.SECONDS)).isEqualTo(new RpcOutcome.Responded("{}"));
  }

  @Test
  void aSessionThatAlwaysGivesTheRequestUpGetsItABoundedNumberOfTimes() {
    Session refusing = connect();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();
    for (int i = 0; i < 5 && i < refusing.taken.size(); i++) {
      refusing.taken.get(i).callback().undelivered("too large for the client");
    }

    assertThat(refusing.taken).hasSize(1 + LightweightCall.IMMEDIATE_REOFFERS);
    assertThat(outcome).isNotDone();
  }

  @Test
  void aRequestGivenUpWaitsForTheNextSubscriptionWhenNobodyElseHasTheDevice() throws Exception {
    Session first = connect();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();
    first.accepting = false;
    first.last().undelivered("session closed");
    assertThat(first.taken).hasSize(1);

    Session second = connect();
    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));

    assertThat(second.taken).hasSize(1);
    second.last().responded("{}");
    assertThat(outcome.get(1, TimeUnit.SECONDS)).isEqualTo(new RpcOutcome.Responded("{}"));
  }

  @Test
  void callsBeyondTheDeviceBoundAreRejected() {
    service.close();
    service = service(device -> true, 100, 2);
    service.call(rpc(false, false, 5_000, 0));
    service.call(rpc(false, false, 5_000, 0));

    assertThatThrownBy(() -> service.call(rpc(false, false, 5_000, 0)).toCompletableFuture().get())
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(RpcRejectedException.class);
    assertThat(meters.counter("fieldline.rpc.rejected").count()).isEqualTo(1.0);
  }

  @Test
  void closingAnswersEveryWaitingCall() throws Exception {
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();
    service.close();
    assertThat(outcome.get(1, TimeUnit.SECONDS)).isEqualTo(new RpcOutcome.Stopped());
  }

  @Test
  void persistentRequestMovesThroughItsStatuses() throws Exception {
    Session session = connect();
    ToDeviceRpc request = rpc(false, true, 5_000, 0);
    UUID id = service.submit(request).toCompletableFuture().get(1, TimeUnit.SECONDS);
    assertThat(id).isEqualTo(request.id());

    assertThat(session.taken).hasSize(1);
    session.last().sent();
    assertThat(store.get(id).orElseThrow().status()).isEqualTo(RpcStatus.SENT);
    session.last().delivered();
    assertThat(store.get(id).orElseThrow().status()).isEqualTo(RpcStatus.DELIVERED);
    session.last().responded("{\"done\":1}");
    assertThat(store.get(id).orElseThrow().status()).isEqualTo(RpcStatus.SUCCESSFUL);
    assertThat(store.get(id).orElseThrow().responseJson()).isEqualTo("{\"done\":1}");
    // A late report cannot move it back.
    session.last().delivered();
    assertThat(store.get(id).orElseThrow().status()).isEqualTo(RpcStatus.SUCCESSFUL);
  }

  @Test
  void persistentRequestForAnOfflineDeviceIsDeliveredWhenItSubscribes() throws Exception {
    UUID id =
        service.submit(rpc(true, true, 5_000, 0)).toCompletableFuture().get(1, TimeUnit.SECONDS);
    assertThat(store.get(id).orElseThrow().status()).isEqualTo(RpcStatus.QUEUED);

    // As after a restart: a new service, nothing in memory, only the store.
    service.close();
    service = service(device -> true, 100, 10);
    Session session = connect();
    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));

    await().atMost(Duration.ofSeconds(2)).until(() -> session.taken.size() == 1);
    session.last().sent();
    session.last().delivered();
    assertThat(store.get(id).orElseThrow().status()).isEqualTo(RpcStatus.SUCCESSFUL);
  }

  @Test
  void persistentRequestsBeyondTheDeviceBoundAreRefusedAndASubscriptionReadsAtMostTheBound()
      throws Exception {
    service.close();
    maxPersistentPerDevice = 2;
    service = service(device -> true, 100, 10);
    service.submit(rpc(true, true, 5_000, 0)).toCompletableFuture().get(1, TimeUnit.SECONDS);
    service.submit(rpc(true, true, 5_000, 0)).toCompletableFuture().get(1, TimeUnit.SECONDS);

    assertThatThrownBy(() -> service.submit(rpc(true, true, 5_000, 0)).toCompletableFuture().join())
        .hasCauseInstanceOf(RpcRejectedException.class)
        .hasMessageContaining("max-persistent-per-device");
    assertThat(store.countOpen(DEVICE, System.currentTimeMillis()).toCompletableFuture().join())
        .isEqualTo(2);
    assertThat(meters.counter("fieldline.rpc.persistent.refused").count()).isEqualTo(1);

    // Stored before the bound was lowered: a subscription still offers only the oldest two.
    store.save(
        new io.fieldline.common.rpc.StoredRpc(
            rpc(true, true, 5_000, 0), System.currentTimeMillis() + 1, RpcStatus.QUEUED, null));
    service.close();
    service = service(device -> true, 100, 10);
    Session session = connect();
    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));
    await().atMost(Duration.ofSeconds(2)).until(() -> session.taken.size() == 2);
    assertThat(session.taken).hasSize(2);
  }

  @Test
  void onlyTheOwnerOffersStoredRequests() throws Exception {
    UUID id =
        service.submit(rpc(true, true, 5_000, 0)).toCompletableFuture().get(1, TimeUnit.SECONDS);
    service.close();
    service = service(device -> false, 100, 10);
    Session session = connect();

    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));

    assertThat(session.taken).isEmpty();
    assertThat(store.get(id).orElseThrow().status()).isEqualTo(RpcStatus.QUEUED);
  }

  @Test
  void anUnansweredPersistentRequestIsRetriedThenTimesOut() throws Exception {
    Session session = connect();
    UUID id =
        service.submit(rpc(false, true, 200, 1)).toCompletableFuture().get(1, TimeUnit.SECONDS);
    session.last().sent();

    await().atMost(Duration.ofSeconds(3)).until(() -> session.taken.size() == 2);
    assertThat(session.last()).isNotSameAs(session.taken.get(0).callback());
    assertThat(store.get(id).orElseThrow().request().retries()).isZero();
    session.last().sent();

    await()
        .atMost(Duration.ofSeconds(3))
        .until(() -> store.get(id).orElseThrow().status() == RpcStatus.TIMEOUT);
    assertThat(session.taken).hasSize(2);
  }

  @Test
  void aQueuedRequestPastItsExpirationReadsExpired() throws Exception {
    long now = System.currentTimeMillis();
    ToDeviceRpc shortLived =
        new ToDeviceRpc(
            UUID.randomUUID(), DEVICE, "m", "{}", true, true, 1_000, now + 100, 0, null);
    service.submit(shortLived).toCompletableFuture().get(1, TimeUnit.SECONDS);

    await()
        .atMost(Duration.ofSeconds(3))
        .until(
            () ->
                service.find(shortLived.id()).toCompletableFuture().get().orElseThrow().status()
                    == RpcStatus.EXPIRED);
    assertThat(store.get(shortLived.id()).orElseThrow().status()).isEqualTo(RpcStatus.EXPIRED);
  }

  /**
   * The event path of a cluster whose count of takers comes back late: events reach this node's
   * listeners at once, the counts only when {@link #answer} is called, as when a session on another
   * node reports faster than that node's count arrives.
   */
  private final class LateCounts implements DeviceEvents {
    final Deque<Runnable> counts = new ArrayDeque<>();

    @Override
    public synchronized CompletionStage<Integer> publish(DeviceEvent event) {
      int takers = events.deliver(event);
      CompletableFuture<Integer> count = new CompletableFuture<>();
      counts.add(() -> count.complete(takers));
      return count;
    }

    @Override
    public Subscription subscribe(DeviceId device, DeviceEventListener listener) {
      return events.subscribe(device, listener);
    }

    void answer() {
      Runnable next;
      synchronized (this) {
        next = counts.poll();
      }
      next.run();
    }
  }

  @Test
  void aSessionThatGivesTheRequestUpBeforeTheCountArrivesDoesNotHoldIt() throws Exception {
    LateCounts late = new LateCounts();
    service.close();
    service = service(late, device -> true, 100, 10);
    Session first = connect();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();
    first.accepting = false;
    first.last().undelivered("closed");
    late.answer(); // one taker, who has given it up already

    Session second = connect();
    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));
    late.answer();

    assertThat(second.taken).hasSize(1);
    second.last().responded("{}");
    assertThat(outcome.get(1, TimeUnit.SECONDS)).isEqualTo(new RpcOutcome.Responded("{}"));
  }

  @Test
  void aLateReportFromAnEarlierOfferDoesNotUndoTheCurrentOne() {
    Session first = connect();
    CompletableFuture<RpcOutcome> outcome =
        service.call(rpc(false, false, 5_000, 0)).toCompletableFuture();
    RpcCallback firstOffer = first.last();
    first.accepting = false;
    firstOffer.undelivered("closed");
    Session second = connect();
    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));
    assertThat(second.taken).hasSize(1);

    firstOffer.undelivered("closed, reported again");
    Session third = connect();
    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));

    assertThat(third.taken).isEmpty();
    assertThat(outcome).isNotDone();
  }

  @Test
  void aPersistentRequestOfferedWhileTheDeviceSubscribesIsOfferedAgain() throws Exception {
    LateCounts late = new LateCounts();
    service.close();
    service = service(late, device -> true, 100, 10);
    UUID id =
        service.submit(rpc(true, true, 5_000, 0)).toCompletableFuture().get(1, TimeUnit.SECONDS);
    // The offer found nobody; before its count is back, the device subscribes.
    Session session = connect();
    events.publish(new DeviceEvent.RpcSubscribed(DEVICE));
    late.answer();
    late.answer();

    await().atMost(Duration.ofSeconds(2)).until(() -> session.taken.size() == 1);
    session.last().delivered();
    await()
        .atMost(Duration.ofSeconds(2))
        .until(() -> store.get(id).orElseThrow().status() == RpcStatus.SUCCESSFUL);
  }

  @Test
  void aReportAfterTheOfferWasCountedAsNobodysStillMovesTheRequest() throws Exception {
    LateCounts late = new LateCounts();
    service.close();
    service = service(late, device -> true, 100, 10);
    Session session = connect();
    UUID id =
        service.submit(rpc(false, true, 5_000, 0)).toCompletableFuture().get(1, TimeUnit.SECONDS);
    RpcCallback offer = session.last();
    // The peer's count timed out: counted as nobody.
    late.counts.clear();
    offer.sent();
    offer.responded("{\"late\":true}");

    await()
        .atMost(Duration.ofSeconds(2))
        .until(() -> store.get(id).orElseThrow().status() == RpcStatus.SUCCESSFUL);
    assertThat(store.get(id).orElseThrow().responseJson()).isEqualTo("{\"late\":true}");
  }

  @Test
  void callsAfterCloseAreAnsweredStopped() throws Exception {
    service.close();
    assertThat(
            service
                .call(rpc(false, false, 5_000, 0))
                .toCompletableFuture()
                .get(1, TimeUnit.SECONDS))
        .isEqualTo(new RpcOutcome.Stopped());
  }
}
