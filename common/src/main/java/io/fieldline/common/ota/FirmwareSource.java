package io.fieldline.common.ota;

import io.fieldline.common.DeviceId;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * What a device's firmware download reads: which package is assigned to the device, and ranges of
 * its data. The MQTT transport ({@code v2/fw/request/...}) and the HTTP device API ({@code
 * /api/v1/{token}/firmware}) read through it. Every method is asynchronous and never blocks; stages
 * fail with {@link io.fieldline.common.StoreException} when storage cannot answer.
 */
public interface FirmwareSource {

  /**
   * The device's firmware, with or without data: the package assigned to the device itself ({@code
   * firmwareId}) if any, else the one assigned to its device profile; empty when neither is (or the
   * package is gone).
   */
  CompletionStage<Optional<OtaPackageInfo>> assignedFirmware(DeviceId device);

  /**
   * Up to {@code length} bytes of the package's data from {@code offset}: fewer at the end of the
   * data, none from its end on. A range within one storage chunk ({@link #dataChunkSize()}) costs
   * one row read, any range at most two.
   *
   * @throws IllegalArgumentException (synchronously) for a negative offset or a length outside
   *     1..{@link #dataChunkSize()}
   * @return the bytes; completes with none when the package has no data (or no longer exists)
   */
  CompletionStage<byte[]> readData(OtaPackageId id, long offset, int length);

  /** The size in bytes of the chunks a package's data is stored in (the last may be shorter). */
  int dataChunkSize();
}
