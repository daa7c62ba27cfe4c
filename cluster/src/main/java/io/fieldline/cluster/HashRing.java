package io.fieldline.cluster;

import io.fieldline.common.DeviceId;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.commons.codec.digest.MurmurHash3;
import org.jspecify.annotations.Nullable;

/**
 * The consistent-hash ring that names each device's owner node. Every node builds it from the same
 * membership and gets the same answer: positions are MurmurHash3 (x64, first 64 bits) of the device
 * id's 16 bytes and of {@code "<nodeId>#<i>"} for each of a node's virtual nodes; a device belongs
 * to the first virtual node at or after its position, wrapping around. When a node joins or leaves,
 * only the devices between its virtual nodes and their predecessors move (about 1/N).
 *
 * <p>Immutable and thread-safe; a lookup is a binary search over a sorted {@code long[]}.
 */
public final class HashRing {

  private static final HashRing EMPTY =
      new HashRing(new long[0], new String[0], new TreeSet<>(), 0);

  private final long[] positions;
  private final String[] owners;
  private final SortedSet<String> nodes;
  private final int virtualNodes;

  private HashRing(long[] positions, String[] owners, SortedSet<String> nodes, int virtualNodes) {
    this.positions = positions;
    this.owners = owners;
    this.nodes = Collections.unmodifiableSortedSet(nodes);
    this.virtualNodes = virtualNodes;
  }

  /** A ring without nodes: nothing has an owner. */
  public static HashRing empty() {
    return EMPTY;
  }

  /**
   * Builds the ring of {@code nodeIds}, each with {@code virtualNodes} points. The order of the
   * collection does not matter; duplicates are ignored.
   */
  public static HashRing of(Collection<String> nodeIds, int virtualNodes) {
    if (virtualNodes < 1) {
      throw new IllegalArgumentException("virtualNodes must be >= 1");
    }
    SortedSet<String> nodes = new TreeSet<>(nodeIds);
    if (nodes.isEmpty()) {
      return EMPTY;
    }
    int size = nodes.size() * virtualNodes;
    Point[] points = new Point[size];
    int i = 0;
    for (String node : nodes) {
      for (int v = 0; v < virtualNodes; v++) {
        byte[] key = (node + "#" + v).getBytes(StandardCharsets.UTF_8);
        points[i++] = new Point(hash(key), node);
      }
    }
    // Ties (two points at one position, 2^-64 odds) are broken by node id: still deterministic.
    Arrays.sort(
        points,
        (a, b) ->
            a.position != b.position
                ? Long.compare(a.position, b.position)
                : a.node.compareTo(b.node));
    long[] positions = new long[size];
    String[] owners = new String[size];
    for (int p = 0; p < size; p++) {
      positions[p] = points[p].position;
      owners[p] = points[p].node;
    }
    return new HashRing(positions, owners, nodes, virtualNodes);
  }

  private record Point(long position, String node) {}

  /** The owner node of {@code device}, or null if the ring is empty. */
  public @Nullable String ownerOf(DeviceId device) {
    if (positions.length == 0) {
      return null;
    }
    int index = Arrays.binarySearch(positions, position(device));
    if (index < 0) {
      index = -index - 1; // the insertion point: the first position after the device's
    }
    // Past the last point the ring wraps to the first.
    return owners[Math.floorMod(index, positions.length)];
  }

  /** The ring position of a device. */
  static long position(DeviceId device) {
    ByteBuffer bytes = ByteBuffer.allocate(16);
    bytes.putLong(device.value().getMostSignificantBits());
    bytes.putLong(device.value().getLeastSignificantBits());
    return hash(bytes.array());
  }

  /**
   * MurmurHash3 x64 128-bit with seed 0, its first 64 bits: stable across JVMs and versions, unlike
   * {@code hashCode()}. Commons Codec's {@code hash128x64}, which is the reference algorithm; not
   * its older {@code hash128}, which sign-extends the seed (CODEC-264) and whose one-argument form
   * uses a seed of 104729: either would move every device to another node.
   */
  static long hash(byte[] data) {
    return MurmurHash3.hash128x64(data)[0];
  }

  /** The node ids on the ring, sorted. */
  public SortedSet<String> nodes() {
    return nodes;
  }

  public boolean contains(String nodeId) {
    return nodes.contains(nodeId);
  }

  public boolean isEmpty() {
    return nodes.isEmpty();
  }

  @Override
  public boolean equals(@Nullable Object other) {
    return other instanceof HashRing ring
        && ring.virtualNodes == virtualNodes
        && ring.nodes.equals(nodes);
  }

  @Override
  public int hashCode() {
    return nodes.hashCode() * 31 + virtualNodes;
  }

  @Override
  public String toString() {
    return "HashRing" + nodes + "x" + virtualNodes;
  }
}
