package io.fieldline.transport.common.firmware;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The meters of firmware downloads, over MQTT and HTTP alike: chunks served and their bytes, and
 * refusals by reason. Names are {@code fieldline.ota.*}; tags come from the enums below.
 * Thread-safe.
 */
public final class FirmwareMetrics {

  /** Chunks served, tagged by protocol. */
  public static final String CHUNKS = "fieldline.ota.chunks";

  /** Bytes of firmware served, tagged by protocol. */
  public static final String BYTES = "fieldline.ota.chunk.bytes";

  /** Refused download requests, tagged by protocol and reason. */
  public static final String REFUSED = "fieldline.ota.refused";

  /** How the device asked. */
  public enum Protocol {
    MQTT,
    HTTP
  }

  /** Why a download request got no data. */
  public enum Refusal {
    /** The topic, the chunk number or the chunk size is not understood. */
    BAD_REQUEST,
    /** The chunk size asked for is above {@code max-chunk-size}. */
    CHUNK_TOO_LARGE,
    /** No firmware with data is assigned to the device. */
    NO_FIRMWARE,
    /** HTTP: the title or version asked for is not the assigned firmware's. */
    WRONG_VERSION,
    /** Reading the data failed (storage); the device may ask again. */
    READ_FAILED,
    /** MQTT 5: the answer would exceed the client's Maximum Packet Size. */
    TOO_LARGE_FOR_CLIENT,
    /** MQTT: the session's downlink queue had no room for the answer. */
    QUEUE_FULL
  }

  private final Map<Protocol, Counter> chunks = new EnumMap<>(Protocol.class);
  private final Map<Protocol, Counter> bytes = new EnumMap<>(Protocol.class);
  private final Map<Protocol, Map<Refusal, Counter>> refused = new EnumMap<>(Protocol.class);

  public FirmwareMetrics(MeterRegistry registry) {
    for (Protocol protocol : Protocol.values()) {
      String tag = protocol.name().toLowerCase(Locale.ROOT);
      chunks.put(
          protocol,
          Counter.builder(CHUNKS)
              .tag("protocol", tag)
              .description("Firmware chunks served to devices (an empty one past the end too)")
              .register(registry));
      bytes.put(
          protocol,
          Counter.builder(BYTES)
              .tag("protocol", tag)
              .description("Bytes of firmware served to devices")
              .register(registry));
      Map<Refusal, Counter> reasons = new EnumMap<>(Refusal.class);
      for (Refusal refusal : Refusal.values()) {
        reasons.put(
            refusal,
            Counter.builder(REFUSED)
                .tag("protocol", tag)
                .tag("reason", refusal.name().toLowerCase(Locale.ROOT))
                .description("Firmware download requests refused, by reason")
                .register(registry));
      }
      refused.put(protocol, reasons);
    }
  }

  /** A chunk of {@code size} bytes was handed to the device's connection. */
  public void served(Protocol protocol, long size) {
    // every map holds a counter for every constant, registered in the constructor
    Objects.requireNonNull(chunks.get(protocol)).increment();
    Objects.requireNonNull(bytes.get(protocol)).increment(size);
  }

  public void refused(Protocol protocol, Refusal refusal) {
    Objects.requireNonNull(Objects.requireNonNull(refused.get(protocol)).get(refusal)).increment();
  }
}
