package io.fieldline.common.kv;

import io.fieldline.common.DeviceId;
import java.util.List;
import java.util.Objects;

/**
 * What a device asks the server to store: the unit handed from the transport to the device's
 * gateway, acknowledged once as a whole (one PUBACK per PUBLISH, after every row is written).
 */
public sealed interface DeviceMessage {

  DeviceId deviceId();

  /** Epoch milliseconds at which the transport received the message. */
  long receivedAt();

  /** Number of key/value rows the message will write. */
  int size();

  /**
   * Time-series values from {@code v1/devices/me/telemetry}.
   *
   * @param entries parsed values, in payload order; may be empty
   */
  record PostTelemetry(DeviceId deviceId, long receivedAt, List<TsKvEntry> entries)
      implements DeviceMessage {
    public PostTelemetry {
      Objects.requireNonNull(deviceId, "deviceId");
      entries = List.copyOf(entries);
    }

    @Override
    public int size() {
      return entries.size();
    }
  }

  /**
   * Client-side attributes from {@code v1/devices/me/attributes}.
   *
   * @param entries parsed values; their update time is {@code receivedAt}
   */
  record PostAttributes(DeviceId deviceId, long receivedAt, List<KvEntry> entries)
      implements DeviceMessage {
    public PostAttributes {
      Objects.requireNonNull(deviceId, "deviceId");
      entries = List.copyOf(entries);
    }

    @Override
    public int size() {
      return entries.size();
    }
  }
}
