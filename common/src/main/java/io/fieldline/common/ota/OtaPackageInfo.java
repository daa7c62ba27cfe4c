package io.fieldline.common.ota;

import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A stored OTA package, ThingsBoard's {@code OtaPackageInfo}: what was created, and its data once
 * uploaded. Immutable.
 *
 * @param id the package id
 * @param createdTime creation time, epoch milliseconds
 * @param title the package's name; with {@code version} unique among packages
 * @param version the package's version
 * @param type firmware or software
 * @param tag ThingsBoard's free-form tag, null when none
 * @param deviceProfileId the device profile the package is meant for, null when none
 * @param additionalInfoJson a JSON object as text, null when none
 * @param data the uploaded file, null until it is uploaded
 */
public record OtaPackageInfo(
    OtaPackageId id,
    long createdTime,
    String title,
    String version,
    OtaPackageType type,
    @Nullable String tag,
    @Nullable UUID deviceProfileId,
    @Nullable String additionalInfoJson,
    @Nullable OtaPackageData data) {

  public OtaPackageInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(type, "type");
  }

  /** Whether its data was uploaded: only then can it be assigned and downloaded. */
  public boolean hasData() {
    return data != null;
  }

  /** This package with {@code uploaded} as its data. */
  public OtaPackageInfo withData(OtaPackageData uploaded) {
    return new OtaPackageInfo(
        id, createdTime, title, version, type, tag, deviceProfileId, additionalInfoJson, uploaded);
  }
}
