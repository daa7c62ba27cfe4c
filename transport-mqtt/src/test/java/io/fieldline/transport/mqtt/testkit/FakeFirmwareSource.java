package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.DeviceId;
import io.fieldline.common.ota.ChecksumAlgorithm;
import io.fieldline.common.ota.FirmwareSource;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageType;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Firmware held in memory for transport tests: packages assigned to devices and their data. Reads
 * can be held until the test completes them ({@link #holdReads}) or made to fail ({@link
 * #failReads}); assignment look-ups are counted. Thread-safe.
 */
public final class FakeFirmwareSource implements FirmwareSource {

  private final Map<DeviceId, OtaPackageInfo> assigned = new ConcurrentHashMap<>();
  private final Map<OtaPackageId, byte[]> data = new ConcurrentHashMap<>();
  private final List<Held> held = new CopyOnWriteArrayList<>();
  private final AtomicInteger lookups = new AtomicInteger();
  private volatile boolean holding;
  private volatile RuntimeException failure;

  /** Assigns a new firmware package holding {@code bytes} to {@code device}. */
  public OtaPackageInfo assign(DeviceId device, String title, byte[] bytes) {
    OtaPackageInfo firmware =
        new OtaPackageInfo(
                OtaPackageId.random(),
                1_000L,
                title,
                "1.0",
                OtaPackageType.FIRMWARE,
                null,
                null,
                null,
                null)
            .withData(
                new OtaPackageData(
                    "fw.bin",
                    "application/octet-stream",
                    bytes.length,
                    ChecksumAlgorithm.SHA256,
                    ChecksumAlgorithm.SHA256.of(bytes)));
    data.put(firmware.id(), bytes.clone());
    assigned.put(device, firmware);
    return firmware;
  }

  /** From now on, reads wait until {@link #completeHeld} (false: they answer at once again). */
  public void holdReads(boolean hold) {
    holding = hold;
  }

  /** Completes every held read with its bytes. */
  public void completeHeld() {
    List<Held> now = List.copyOf(held);
    held.clear();
    now.forEach(read -> read.future().complete(read.bytes()));
  }

  /** Reads held now. */
  public int heldReads() {
    return held.size();
  }

  /** From now on, reads fail with {@code error} (null: they succeed again). */
  public void failReads(RuntimeException error) {
    failure = error;
  }

  /** How many times an assignment was looked up. */
  public int lookups() {
    return lookups.get();
  }

  @Override
  public CompletionStage<Optional<OtaPackageInfo>> assignedFirmware(DeviceId device) {
    lookups.incrementAndGet();
    return CompletableFuture.completedFuture(Optional.ofNullable(assigned.get(device)));
  }

  @Override
  public CompletionStage<byte[]> readData(OtaPackageId id, long offset, int length) {
    RuntimeException error = failure;
    if (error != null) {
      return CompletableFuture.failedFuture(error);
    }
    byte[] bytes = data.getOrDefault(id, new byte[0]);
    byte[] slice =
        offset >= bytes.length
            ? new byte[0]
            : Arrays.copyOfRange(
                bytes, (int) offset, (int) Math.min(bytes.length, offset + length));
    if (!holding) {
      return CompletableFuture.completedFuture(slice);
    }
    CompletableFuture<byte[]> later = new CompletableFuture<>();
    held.add(new Held(later, slice));
    return later;
  }

  @Override
  public int dataChunkSize() {
    return 64 * 1024;
  }

  /** A read waiting for {@link #completeHeld}, with the bytes it will complete with. */
  private record Held(CompletableFuture<byte[]> future, byte[] bytes) {}
}
