package io.fieldline.cluster.ring;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.cluster.ClusterView;
import io.fieldline.cluster.HashRing;
import io.fieldline.common.DeviceId;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class RingHistoryTest {

  private final AtomicLong clock = new AtomicLong(1_000);
  private final RingHistory history = new RingHistory(clock::get, 10_000);

  private static ClusterView view(String... nodes) {
    return new ClusterView(HashRing.of(List.of(nodes), 64), Map.of(), true);
  }

  // A device that n3 owns on the 3-node ring (it then moves when n3 leaves).
  private static DeviceId ownedBy(HashRing ring, String node) {
    return Stream.generate(DeviceId::random)
        .filter(device -> node.equals(ring.ownerOf(device)))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void should_name_both_owners_of_a_moved_device_over_a_span_that_covers_the_change() {
    ClusterView three = view("n1", "n2", "n3");
    history.accept(three);
    DeviceId moved = ownedBy(three.ring(), "n3");
    clock.set(5_000);
    history.accept(view("n1", "n2"));
    String newOwner = view("n1", "n2").ring().ownerOf(moved);

    assertThat(history.owners(moved, 4_000, 6_000)).containsExactlyInAnyOrder("n3", newOwner);
    assertThat(history.owners(moved, 5_500, 6_000)).containsExactly(newOwner);
    assertThat(history.owners(moved, 0, 4_999)).containsExactly("n3");
  }

  @Test
  void should_name_one_owner_for_a_device_that_did_not_move_and_none_before_any_ring() {
    DeviceId device = DeviceId.random();
    assertThat(history.owners(device, 0, 10_000)).isEmpty();
    history.accept(view("n1", "n2", "n3"));
    String owner = view("n1", "n2", "n3").ring().ownerOf(device);
    clock.set(5_000);
    history.accept(view("n1", "n2", "n3")); // same nodes: not a change
    assertThat(history.owners(device, 0, 10_000)).containsExactly(owner);
  }

  @Test
  void should_forget_rings_replaced_longer_ago_than_it_keeps() {
    ClusterView three = view("n1", "n2", "n3");
    history.accept(three);
    DeviceId moved = ownedBy(three.ring(), "n3");
    clock.set(5_000);
    history.accept(view("n1", "n2"));
    clock.set(5_000 + 10_001);
    history.accept(view("n1", "n2", "n4")); // a change after keep: the 3-node ring is dropped
    assertThat(history.owners(moved, 0, 20_000)).doesNotContain("n3");
  }
}
