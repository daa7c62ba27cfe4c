package io.fieldline.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Hashing;
import io.fieldline.common.DeviceId;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class HashRingTest {

  private static final int DEVICES = 30_000;

  private static List<DeviceId> devices(long seed, int count) {
    Random random = new Random(seed);
    List<DeviceId> devices = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      devices.add(new DeviceId(new UUID(random.nextLong(), random.nextLong())));
    }
    return devices;
  }

  private static Map<DeviceId, String> owners(HashRing ring, List<DeviceId> devices) {
    Map<DeviceId, String> owners = new HashMap<>();
    for (DeviceId device : devices) {
      owners.put(device, ring.ownerOf(device));
    }
    return owners;
  }

  @Test
  void should_name_the_same_owner_when_built_from_the_same_nodes_in_any_order() {
    HashRing one = HashRing.of(List.of("n1", "n2", "n3"), 64);
    HashRing other = HashRing.of(List.of("n3", "n1", "n2", "n1"), 64);
    List<DeviceId> devices = devices(1, 5_000);
    assertThat(owners(one, devices)).isEqualTo(owners(other, devices));
    assertThat(one).isEqualTo(other);
  }

  @Test
  void should_name_the_pinned_owners_when_hash_and_virtual_nodes_are_unchanged() {
    // Every node of a cluster, whatever its version, must name the same owners (a rolling upgrade
    // runs old and new nodes side by side). These owners were computed once from this
    // implementation; a change of the hash, of the device id's bytes or of the virtual-node keys
    // ("<nodeId>#<i>") moves them and fails here. Such a change needs a whole-cluster restart.
    HashRing ring = HashRing.of(List.of("n1", "n2", "n3"), 64);
    Map<String, String> pinned = new LinkedHashMap<>();
    pinned.put("7c9e6679-7425-40de-944b-e07fc1f90ae7", "n2");
    pinned.put("00000000-0000-0000-0000-000000000001", "n2");
    pinned.put("123e4567-e89b-12d3-a456-426614174000", "n3");
    pinned.put("f47ac10b-58cc-4372-a567-0e02b2c3d479", "n1");
    pinned.put("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "n3");
    pinned.put("ffffffff-ffff-ffff-ffff-ffffffffffff", "n2");
    pinned.put("3f2504e0-4f89-11d3-9a0c-0305e82c3301", "n2");
    pinned.put("550e8400-e29b-41d4-a716-446655440000", "n2");
    Map<String, String> owners = new LinkedHashMap<>();
    for (String device : pinned.keySet()) {
      owners.put(device, ring.ownerOf(DeviceId.parse(device)));
    }
    assertThat(owners).isEqualTo(pinned);
  }

  @Test
  @SuppressWarnings("UnstableApiUsage")
  void should_hash_like_guava_murmur3_128_when_hashing_any_length_and_any_byte() {
    // Guava (on the test classpath through gRPC) is an independent implementation of the same
    // function. Random bytes include negative ones and every tail length (0 to 15 bytes after the
    // last 16-byte block): where ports of MurmurHash3 usually differ.
    Random random = new Random(42);
    for (int length = 0; length <= 80; length++) {
      for (int round = 0; round < 20; round++) {
        byte[] data = new byte[length];
        random.nextBytes(data);
        assertThat(HashRing.hash(data))
            .as("length %d", length)
            .isEqualTo(Hashing.murmur3_128().hashBytes(data).asLong());
      }
    }
    assertThat(HashRing.hash(new byte[0])).isZero();
  }

  @Test
  void should_name_no_owner_when_the_ring_is_empty() {
    assertThat(HashRing.empty().ownerOf(DeviceId.random())).isNull();
    assertThat(HashRing.of(List.of(), 64).isEmpty()).isTrue();
  }

  @Test
  void should_match_a_sorted_map_lookup_when_positions_wrap_around() {
    HashRing ring = HashRing.of(List.of("a", "b", "c", "d"), 8);
    TreeMap<Long, String> reference = new TreeMap<>();
    for (String node : List.of("a", "b", "c", "d")) {
      for (int v = 0; v < 8; v++) {
        byte[] key = (node + "#" + v).getBytes(StandardCharsets.UTF_8);
        reference.put(Hashing.murmur3_128().hashBytes(key).asLong(), node);
      }
    }
    int wrapped = 0;
    for (DeviceId device : devices(2, 20_000)) {
      Map.Entry<Long, String> at = reference.ceilingEntry(HashRing.position(device));
      if (at == null) {
        at = reference.firstEntry();
        wrapped++;
      }
      assertThat(ring.ownerOf(device)).isEqualTo(at.getValue());
    }
    assertThat(wrapped).as("some devices lie past the last point").isPositive();
  }

  @Test
  void should_move_about_one_nth_of_devices_to_the_new_node_when_a_node_joins() {
    List<DeviceId> devices = devices(3, DEVICES);
    Map<DeviceId, String> before = owners(HashRing.of(List.of("n1", "n2", "n3"), 64), devices);
    Map<DeviceId, String> after = owners(HashRing.of(List.of("n1", "n2", "n3", "n4"), 64), devices);
    int moved = 0;
    for (DeviceId device : devices) {
      if (!before.get(device).equals(after.get(device))) {
        moved++;
        assertThat(after.get(device)).as("a device only moves to the new node").isEqualTo("n4");
      }
    }
    // Ideal: 1/4. Bound: 1/4 ± 0.1 with 64 virtual nodes.
    assertThat(moved / (double) DEVICES).isBetween(0.15, 0.35);
  }

  @Test
  void should_move_only_the_leaving_nodes_devices_when_a_node_leaves() {
    List<DeviceId> devices = devices(4, DEVICES);
    Map<DeviceId, String> before =
        owners(HashRing.of(List.of("n1", "n2", "n3", "n4"), 64), devices);
    Map<DeviceId, String> after = owners(HashRing.of(List.of("n1", "n2", "n3"), 64), devices);
    int moved = 0;
    for (DeviceId device : devices) {
      if (!before.get(device).equals(after.get(device))) {
        moved++;
        assertThat(before.get(device)).as("only the leaver's devices move").isEqualTo("n4");
      } else {
        assertThat(before.get(device)).isNotEqualTo("n4");
      }
    }
    assertThat(moved / (double) DEVICES).isBetween(0.15, 0.35);
  }

  @Test
  void should_keep_every_node_within_35_percent_of_its_fair_share_when_64_virtual_nodes() {
    assertSpread(List.of("n1", "n2", "n3"), 64, 0.35);
    assertSpread(
        List.of("fieldline-1", "fieldline-2", "fieldline-3", "fieldline-4", "fieldline-5"),
        64,
        0.35);
  }

  @Test
  void should_spread_more_evenly_when_more_virtual_nodes() {
    assertSpread(List.of("n1", "n2", "n3"), 512, 0.12);
  }

  private static void assertSpread(List<String> nodes, int virtualNodes, double bound) {
    HashRing ring = HashRing.of(nodes, virtualNodes);
    Map<String, Integer> counts = new HashMap<>();
    for (DeviceId device : devices(5, DEVICES)) {
      counts.merge(ring.ownerOf(device), 1, Integer::sum);
    }
    double fair = DEVICES / (double) nodes.size();
    assertThat(counts).hasSize(nodes.size());
    for (Map.Entry<String, Integer> count : counts.entrySet()) {
      assertThat(Math.abs(count.getValue() - fair) / fair)
          .as("share of %s with %d virtual nodes: %s", count.getKey(), virtualNodes, counts)
          .isLessThanOrEqualTo(bound);
    }
  }
}
