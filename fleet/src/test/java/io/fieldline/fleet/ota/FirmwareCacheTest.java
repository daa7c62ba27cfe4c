package io.fieldline.fleet.ota;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.ota.FirmwareSource;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

class FirmwareCacheTest {

  private static final int CHUNK = 10;

  /** Data of 35 bytes (0..34) in stored chunks of 10, every read recorded. */
  private static final class Stored implements FirmwareSource {
    final byte[] data = new byte[35];
    final List<Long> reads = new ArrayList<>();

    Stored() {
      for (int i = 0; i < data.length; i++) {
        data[i] = (byte) i;
      }
    }

    @Override
    public CompletionStage<Optional<OtaPackageInfo>> assignedFirmware(DeviceId device) {
      return CompletableFuture.completedFuture(Optional.empty());
    }

    @Override
    public CompletionStage<byte[]> readData(OtaPackageId id, long offset, int length) {
      reads.add(offset);
      int from = (int) Math.min(offset, data.length);
      return CompletableFuture.completedFuture(
          Arrays.copyOfRange(data, from, (int) Math.min(data.length, offset + length)));
    }

    @Override
    public int dataChunkSize() {
      return CHUNK;
    }
  }

  private static byte[] range(int from, int to) {
    byte[] out = new byte[to - from];
    for (int i = from; i < to; i++) {
      out[i - from] = (byte) i;
    }
    return out;
  }

  private static byte[] read(FirmwareCache cache, OtaPackageId id, long offset, int length) {
    return cache.readData(id, offset, length).toCompletableFuture().join();
  }

  @Test
  void should_assemble_ranges_across_chunks_and_read_each_stored_chunk_once() {
    Stored stored = new Stored();
    FirmwareCache cache = new FirmwareCache(stored, 1000);
    OtaPackageId id = OtaPackageId.random();

    assertThat(read(cache, id, 5, 10)).isEqualTo(range(5, 15));
    assertThat(read(cache, id, 12, 10)).isEqualTo(range(12, 22));
    assertThat(read(cache, id, 30, 10)).as("short at the end").isEqualTo(range(30, 35));
    assertThat(read(cache, id, 40, 10)).as("past the end").isEmpty();

    assertThat(stored.reads).containsExactly(0L, 10L, 20L, 30L, 40L);
  }

  @Test
  void should_keep_at_most_its_bound_evicting_the_least_recently_used() {
    Stored stored = new Stored();
    FirmwareCache cache = new FirmwareCache(stored, 2 * CHUNK);
    OtaPackageId id = OtaPackageId.random();

    read(cache, id, 0, 5);
    read(cache, id, 10, 5);
    read(cache, id, 0, 5); // chunk 0 used again: chunk 1 is now the eldest
    read(cache, id, 20, 5); // evicts chunk 1
    read(cache, id, 0, 5);
    read(cache, id, 10, 5);

    assertThat(cache.size()).isEqualTo(2);
    assertThat(stored.reads).containsExactly(0L, 10L, 20L, 10L);
  }

  @Test
  void should_read_through_when_its_size_is_zero() {
    Stored stored = new Stored();
    FirmwareCache cache = new FirmwareCache(stored, 0);
    OtaPackageId id = OtaPackageId.random();

    assertThat(read(cache, id, 3, 4)).isEqualTo(range(3, 7));
    assertThat(read(cache, id, 3, 4)).isEqualTo(range(3, 7));

    assertThat(stored.reads).containsExactly(3L, 3L);
    assertThat(cache.size()).isZero();
  }
}
