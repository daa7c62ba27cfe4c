package io.fieldline.transport.common.firmware;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;

/**
 * The bounds of firmware downloads, read once from {@code fieldline.mqtt.firmware} (this module's
 * {@code reference.conf} documents each key). The HTTP device API's {@code /firmware} reads the
 * same record, so a device meets the same chunk bounds whichever protocol it speaks.
 *
 * @param defaultChunkSize bytes per chunk when a request gives no size
 * @param maxChunkSize largest chunk a request may ask for; a larger one is refused
 * @param requestRate chunk requests per second one connection is answered at before its reading is
 *     slowed; 0 = no limit
 * @param requestBurst chunk requests answered at once, on top of the rate
 * @param maxReads chunk reads one connection may have running; at that many its reading pauses
 */
public record FirmwareConfig(
    int defaultChunkSize, int maxChunkSize, int requestRate, int requestBurst, int maxReads) {

  /** The largest chunk any request may ask for: one chunk of the stored data. */
  public static final int CHUNK_SIZE_LIMIT = 64 * 1024;

  /**
   * Reads {@code fieldline.mqtt.firmware} of a resolved root configuration; reports every error.
   */
  public static FirmwareConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, "fieldline.mqtt.firmware");
    int maxChunkSize = (int) r.bytes("max-chunk-size", 1, CHUNK_SIZE_LIMIT);
    int defaultChunkSize = (int) r.bytes("default-chunk-size", 1, CHUNK_SIZE_LIMIT);
    r.check(
        defaultChunkSize <= maxChunkSize,
        "default-chunk-size",
        "must be at most max-chunk-size",
        "max-chunk-size");
    int requestRate = r.integer("request-rate", 0);
    int requestBurst = r.integer("request-burst", 1);
    int maxReads = r.integer("max-reads", 1, 1000);
    return r.validated(
        new FirmwareConfig(defaultChunkSize, maxChunkSize, requestRate, requestBurst, maxReads));
  }
}
