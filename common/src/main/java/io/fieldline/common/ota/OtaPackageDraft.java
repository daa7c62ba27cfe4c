package io.fieldline.common.ota;

import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A package to create, as {@code POST /api/otaPackage} describes it; its data is uploaded later.
 *
 * @param title the package's name; with {@code version} unique among packages
 * @param version the package's version
 * @param type firmware or software
 * @param tag ThingsBoard's free-form tag (sent to devices as {@code fw_tag}), null when none
 * @param deviceProfileId the device profile the package is meant for, null when none
 * @param additionalInfoJson ThingsBoard's {@code additionalInfo}: a JSON object as text, null when
 *     none
 */
public record OtaPackageDraft(
    String title,
    String version,
    OtaPackageType type,
    @Nullable String tag,
    @Nullable UUID deviceProfileId,
    @Nullable String additionalInfoJson) {

  public OtaPackageDraft {
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(type, "type");
  }
}
