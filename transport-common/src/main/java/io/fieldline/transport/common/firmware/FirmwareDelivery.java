package io.fieldline.transport.common.firmware;

import io.fieldline.common.DeviceId;
import io.fieldline.common.ota.FirmwareSource;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What every connection's firmware downloads share: their bounds, where the firmware is read and
 * where they are counted. Immutable; its components are thread-safe.
 *
 * @param config the bounds ({@code fieldline.mqtt.firmware})
 * @param source the assigned packages and their data
 * @param metrics {@code fieldline.ota.*}
 */
public record FirmwareDelivery(
    FirmwareConfig config, FirmwareSource source, FirmwareMetrics metrics) {

  public FirmwareDelivery {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(metrics, "metrics");
  }

  /**
   * Downloads where no package store is wired (tools and tests of other features): every device has
   * no firmware, and every request is answered so on {@code v2/fw/error}.
   */
  public static FirmwareDelivery none() {
    return new FirmwareDelivery(
        new FirmwareConfig(16 * 1024, FirmwareConfig.CHUNK_SIZE_LIMIT, 0, 1, 1),
        new FirmwareSource() {
          @Override
          public CompletionStage<Optional<OtaPackageInfo>> assignedFirmware(DeviceId device) {
            return CompletableFuture.completedFuture(Optional.empty());
          }

          @Override
          public CompletionStage<byte[]> readData(OtaPackageId id, long offset, int length) {
            return CompletableFuture.completedFuture(new byte[0]);
          }

          @Override
          public int dataChunkSize() {
            return FirmwareConfig.CHUNK_SIZE_LIMIT;
          }
        },
        new FirmwareMetrics(new SimpleMeterRegistry()));
  }
}
