package io.fieldline.export;

import io.fieldline.common.DeviceId;
import java.util.Objects;

/**
 * One record as a sink sends it: the JSON document of docs/export.md, made once and sent as is.
 *
 * @param deviceId the device (a Kafka record's key)
 * @param seq the record's per-device sequence number
 * @param storedAt epoch milliseconds at which the feed entry was written (for lag)
 * @param json the record's JSON document, UTF-8
 */
public record ExportRecord(DeviceId deviceId, long seq, long storedAt, byte[] json) {
  public ExportRecord {
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(json, "json");
  }
}
