package io.fieldline.fleet.ota;

import io.fieldline.common.DeviceId;
import io.fieldline.common.ota.FirmwareSource;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The stored chunks of package data that downloads read, kept in memory up to {@code
 * data-cache-size} bytes, least recently used out first. A fleet downloading one firmware in small
 * chunks then reads each stored chunk (64 KiB) from Cassandra once per node instead of once per
 * device chunk (16 KiB by default: four reads of the same row per device). No invalidation is
 * needed: a package's data never changes once uploaded, and a package id is never reused.
 *
 * <p>Assignments are not cached here (a session remembers its download's package). Concurrent
 * misses of one chunk may read it twice; the second copy replaces the first. Thread-safe: one lock
 * around the map, held only to look up, insert and evict.
 */
public final class FirmwareCache implements FirmwareSource {

  private final FirmwareSource delegate;
  private final long maxBytes;
  private final LinkedHashMap<Key, byte[]> chunks = new LinkedHashMap<>(16, 0.75f, true);
  private long bytes;

  /**
   * @param maxBytes bytes of chunks kept; 0 reads through to {@code delegate} every time
   */
  public FirmwareCache(FirmwareSource delegate, long maxBytes) {
    this.delegate = delegate;
    this.maxBytes = maxBytes;
  }

  @Override
  public CompletionStage<Optional<OtaPackageInfo>> assignedFirmware(DeviceId device) {
    return delegate.assignedFirmware(device);
  }

  @Override
  public int dataChunkSize() {
    return delegate.dataChunkSize();
  }

  @Override
  public CompletionStage<byte[]> readData(OtaPackageId id, long offset, int length) {
    int chunkSize = delegate.dataChunkSize();
    if (offset < 0 || length < 1 || length > chunkSize) {
      throw new IllegalArgumentException(
          "need offset >= 0 and length in 1.." + chunkSize + ", got " + offset + ", " + length);
    }
    if (maxBytes == 0) {
      return delegate.readData(id, offset, length);
    }
    long first = offset / chunkSize;
    long last = (offset + length - 1) / chunkSize;
    List<CompletableFuture<byte[]>> parts = new ArrayList<>();
    for (long index = first; index <= last; index++) {
      parts.add(chunk(id, index, chunkSize).toCompletableFuture());
    }
    return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
        .thenApply(done -> slice(parts, first * chunkSize, chunkSize, offset, length));
  }

  /** Chunks held now, for tests and diagnostics. */
  public synchronized int size() {
    return chunks.size();
  }

  // The bytes of [offset, offset + length) out of consecutive chunks starting at partsStart; short
  // where the data ends.
  private static byte[] slice(
      List<CompletableFuture<byte[]>> parts,
      long partsStart,
      int chunkSize,
      long offset,
      int length) {
    byte[] out = new byte[length];
    int filled = 0;
    long position = partsStart;
    for (CompletableFuture<byte[]> part : parts) {
      byte[] chunk = part.join();
      long from = Math.max(offset, position);
      long to = Math.min(offset + length, position + chunk.length);
      if (to > from) {
        System.arraycopy(chunk, (int) (from - position), out, filled, (int) (to - from));
        filled += (int) (to - from);
      }
      if (chunk.length < chunkSize) {
        break; // the end of the data
      }
      position += chunkSize;
    }
    return filled == length ? out : java.util.Arrays.copyOf(out, filled);
  }

  private CompletionStage<byte[]> chunk(OtaPackageId id, long index, int chunkSize) {
    Key key = new Key(id, index);
    synchronized (this) {
      byte[] held = chunks.get(key);
      if (held != null) {
        return CompletableFuture.completedFuture(held);
      }
    }
    return delegate
        .readData(id, index * chunkSize, chunkSize)
        .thenApply(
            read -> {
              if (read.length > 0 && read.length <= maxBytes) {
                keep(key, read);
              }
              return read;
            });
  }

  private synchronized void keep(Key key, byte[] chunk) {
    byte[] replaced = chunks.put(key, chunk);
    bytes += chunk.length - (replaced == null ? 0 : replaced.length);
    var eldest = chunks.entrySet().iterator();
    while (bytes > maxBytes && eldest.hasNext()) {
      Map.Entry<Key, byte[]> out = eldest.next();
      bytes -= out.getValue().length;
      eldest.remove();
    }
  }

  private record Key(OtaPackageId id, long index) {}
}
