package io.fieldline.fleet.ota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.profile.DeviceProfileId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ProfileFanOutsTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  /** Syncs that end when the test says so, and how many were in flight at most. */
  private static final class Syncs {
    final ConcurrentLinkedQueue<CompletableFuture<Void>> running = new ConcurrentLinkedQueue<>();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    final AtomicInteger done = new AtomicInteger();

    CompletionStage<Void> sync(DeviceId device) {
      maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
      CompletableFuture<Void> sync = new CompletableFuture<>();
      running.add(sync);
      return sync.whenComplete(
          (ok, error) -> {
            inFlight.decrementAndGet();
            done.incrementAndGet();
          });
    }

    void endAll() {
      CompletableFuture<Void> next;
      while ((next = running.poll()) != null) {
        next.complete(null);
      }
    }
  }

  private static List<DeviceId> devices(int count) {
    return IntStream.range(0, count).mapToObj(i -> DeviceId.random()).toList();
  }

  @Test
  void should_keep_at_most_16_syncs_in_flight_on_the_node_when_fan_outs_of_profiles_run() {
    Syncs syncs = new Syncs();
    DeviceProfileId first = DeviceProfileId.random();
    DeviceProfileId second = DeviceProfileId.random();
    Map<DeviceProfileId, List<DeviceId>> members = Map.of(first, devices(40), second, devices(40));
    ProfileFanOuts fanOuts =
        new ProfileFanOuts(
            profile -> CompletableFuture.completedFuture(members.get(profile)), syncs::sync, 1);

    fanOuts.request(first, "fw 1");
    fanOuts.request(second, "fw 2");

    assertThat(syncs.inFlight.get()).isEqualTo(ProfileFanOuts.PARALLELISM);
    while (syncs.done.get() < 80) {
      syncs.endAll();
    }
    assertThat(syncs.maxInFlight.get()).isEqualTo(ProfileFanOuts.PARALLELISM);
    assertThat(fanOuts.idle(first).toCompletableFuture()).isDone();
    assertThat(fanOuts.idle(second).toCompletableFuture()).isDone();
    assertThat(fanOuts.lastFailed(first)).isFalse();
  }

  @Test
  void should_coalesce_requests_into_one_pending_fan_out_when_one_runs() {
    Syncs syncs = new Syncs();
    DeviceProfileId profile = DeviceProfileId.random();
    AtomicInteger listings = new AtomicInteger();
    ProfileFanOuts fanOuts =
        new ProfileFanOuts(
            p -> {
              listings.incrementAndGet();
              return CompletableFuture.completedFuture(devices(3));
            },
            syncs::sync,
            1);

    fanOuts.request(profile, "fw 1");
    for (int i = 0; i < 5; i++) {
      fanOuts.request(profile, "fw " + (i + 2));
    }
    while (!fanOuts.idle(profile).toCompletableFuture().isDone()) {
      syncs.endAll();
    }

    assertThat(listings.get()).as("the running one and one pending").isEqualTo(2);
    assertThat(syncs.done.get()).isEqualTo(6);
  }

  @Test
  void should_try_a_failed_fan_out_again_and_start_one_once_the_last_failed() {
    DeviceProfileId profile = DeviceProfileId.random();
    AtomicInteger listings = new AtomicInteger();
    List<DeviceId> synced = new ArrayList<>();
    Map<Integer, Boolean> failing = new ConcurrentHashMap<>(Map.of(0, true));
    ProfileFanOuts fanOuts =
        new ProfileFanOuts(
            p -> {
              listings.incrementAndGet();
              return failing.get(0)
                  ? CompletableFuture.failedFuture(new IllegalStateException("storage down"))
                  : CompletableFuture.completedFuture(devices(2));
            },
            device -> {
              synchronized (synced) {
                synced.add(device);
              }
              return CompletableFuture.completedFuture(null);
            },
            1);

    fanOuts.request(profile, "fw");
    await().atMost(WAIT).until(() -> fanOuts.idle(profile).toCompletableFuture().isDone());

    assertThat(listings.get()).as("once and 3 retries").isEqualTo(1 + ProfileFanOuts.RETRIES);
    assertThat(fanOuts.lastFailed(profile)).isTrue();
    failing.put(0, false);
    fanOuts.request(profile, "fw");
    await().atMost(WAIT).until(() -> fanOuts.idle(profile).toCompletableFuture().isDone());
    assertThat(fanOuts.lastFailed(profile)).isFalse();
    synchronized (synced) {
      assertThat(synced).hasSize(2);
    }
  }
}
