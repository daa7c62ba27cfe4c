package io.fieldline.fleet.ota;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The fleet's OTA meters: uploads by outcome and their bytes, firmware assignments. Names are
 * {@code fieldline.ota.*}, beside the downloads' (the device transports' {@code FirmwareMetrics}).
 * Thread-safe.
 */
public final class OtaMetrics {

  /** Package uploads, tagged by outcome. */
  public static final String UPLOADS = "fieldline.ota.uploads";

  /** Bytes of package data stored by uploads that completed. */
  public static final String UPLOAD_BYTES = "fieldline.ota.upload.bytes";

  /** Firmware assignment changes, tagged by change. */
  public static final String ASSIGNMENTS = "fieldline.ota.assignments";

  /** Devices whose {@code fw_*} attributes were brought up to date, by {@code outcome}. */
  public static final String SYNCS = "fieldline.ota.firmware.syncs";

  /** What became of an upload. */
  public enum UploadOutcome {
    /** Stored: the package has its data. */
    STORED,
    /** The checksum given with the file is not the file's. */
    BAD_CHECKSUM,
    /** The file is above {@code max-package-size}. */
    TOO_LARGE,
    /** The package already had data, or was being deleted. */
    CONFLICT,
    /** No such package, an empty file, or an unknown checksum algorithm. */
    BAD_REQUEST,
    /** Storage failed or the upload broke off; nothing was kept. */
    FAILED
  }

  /** A change of a device's firmware. */
  public enum Change {
    ASSIGNED,
    UNASSIGNED
  }

  /** What bringing a device's {@code fw_*} attributes up to date with its firmware did. */
  public enum Sync {
    /** They were written or deleted. */
    UPDATED,
    /** They already described its firmware. */
    UNCHANGED,
    /** Storage failed: they may be stale until the next change. */
    FAILED
  }

  private final Map<UploadOutcome, Counter> uploads = new EnumMap<>(UploadOutcome.class);
  private final Map<Sync, Counter> syncs = new EnumMap<>(Sync.class);
  private final Map<Change, Counter> assignments = new EnumMap<>(Change.class);
  private final Counter uploadBytes;

  public OtaMetrics(MeterRegistry registry) {
    for (UploadOutcome outcome : UploadOutcome.values()) {
      uploads.put(
          outcome,
          Counter.builder(UPLOADS)
              .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
              .description("OTA package uploads by outcome")
              .register(registry));
    }
    for (Change change : Change.values()) {
      assignments.put(
          change,
          Counter.builder(ASSIGNMENTS)
              .tag("change", change.name().toLowerCase(Locale.ROOT))
              .description("Firmware assigned to or removed from devices")
              .register(registry));
    }
    for (Sync sync : Sync.values()) {
      syncs.put(
          sync,
          Counter.builder(SYNCS)
              .tag("outcome", sync.name().toLowerCase(Locale.ROOT))
              .description(
                  "Devices whose fw_* attributes were checked against their firmware after a"
                      + " change of their profile or of its firmware")
              .register(registry));
    }
    uploadBytes =
        Counter.builder(UPLOAD_BYTES)
            .description("Bytes of OTA package data stored")
            .register(registry);
  }

  /** One upload ended with {@code outcome}, having stored {@code bytes}. */
  public void upload(UploadOutcome outcome, long bytes) {
    Objects.requireNonNull(uploads.get(outcome)).increment(); // one counter per outcome
    if (outcome == UploadOutcome.STORED) {
      uploadBytes.increment(bytes);
    }
  }

  void assignment(Change change) {
    Objects.requireNonNull(assignments.get(change)).increment(); // one per change
  }

  void sync(Sync outcome) {
    Objects.requireNonNull(syncs.get(outcome)).increment(); // one per outcome
  }
}
