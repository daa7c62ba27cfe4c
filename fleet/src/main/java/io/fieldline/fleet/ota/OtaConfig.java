package io.fieldline.fleet.ota;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * The OTA settings, read once from {@code fieldline.ota} (documented in this module's {@code
 * reference.conf}). The chunk bounds of downloads are the device transports' ({@code
 * fieldline.mqtt.firmware}).
 *
 * @param maxPackageBytes largest package file accepted by an upload; larger answers 413
 * @param uploadTimeout how long one upload request may take
 * @param dataCacheBytes bytes of stored chunks kept in memory for downloads; 0 = none
 */
public record OtaConfig(long maxPackageBytes, Duration uploadTimeout, long dataCacheBytes) {

  /** Reads {@code fieldline.ota} of a resolved root configuration; reports every error. */
  public static OtaConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, "fieldline.ota");
    long maxPackageBytes = r.bytes("max-package-size", 1, 1L << 30);
    Duration uploadTimeout = r.positiveDuration("upload-timeout");
    long dataCacheBytes = r.bytes("data-cache-size", 0, 1L << 32);
    return r.validated(new OtaConfig(maxPackageBytes, uploadTimeout, dataCacheBytes));
  }
}
