package io.fieldline.perf.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * One phase of a bench run (Fieldline, Mosquitto or the raw writer): its JSON result, its CPU
 * samples, and the steady window over which rates and CPU are computed.
 *
 * @param json the phase's summary (MqttRunStats or RawDriverWriter output)
 * @param cpu samples of the processes of this phase
 * @param fromMillis start of the steady window (epoch ms)
 * @param toMillis end of the steady window (epoch ms)
 * @param units messages (MQTT phases) or rows (raw writer) completed in the window
 */
record PhaseResult(JsonNode json, CpuSamples cpu, long fromMillis, long toMillis, double units) {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** An MQTT phase: units are acknowledged messages, per second from {@code ackedPerSecond}. */
  static @Nullable PhaseResult mqtt(Path summary, Path samples, double ticksPerSecond) {
    return read(summary, samples, ticksPerSecond, "ackedPerSecond");
  }

  /** The raw writer: units are rows, per second from {@code rowsPerSecond}. */
  static @Nullable PhaseResult raw(Path summary, Path samples, double ticksPerSecond) {
    return read(summary, samples, ticksPerSecond, "rowsPerSecond");
  }

  private static @Nullable PhaseResult read(
      Path summary, Path samples, double ticksPerSecond, String series) {
    if (!Files.isRegularFile(summary)) {
      return null;
    }
    JsonNode json;
    try {
      json = MAPPER.readTree(summary.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return over(
        json,
        CpuSamples.read(samples, ticksPerSecond),
        json.path("steadyWindowSeconds").path(0).asInt(),
        json.path("steadyWindowSeconds").path(1).asInt(),
        series);
  }

  /** The phase over seconds {@code [from, to)} of its run, units from the per-second series. */
  private static PhaseResult over(JsonNode json, CpuSamples cpu, int from, int to, String series) {
    long start = json.path("startEpochMillis").asLong();
    return new PhaseResult(
        json, cpu, start + from * 1000L, start + to * 1000L, sum(json.path(series), from, to));
  }

  private static double sum(JsonNode perSecond, int from, int to) {
    double sum = 0;
    for (int s = Math.max(0, from); s < to && s < perSecond.size(); s++) {
      sum += perSecond.get(s).asDouble();
    }
    return sum;
  }

  /**
   * The same MQTT phase over one of its named windows ({@code windows.<name>.seconds} of the
   * summary, e.g. ColdStart's {@code cold} and {@code warm}): rates, CPU and units over that window
   * instead of the steady one; null when the run has no such window.
   */
  @Nullable PhaseResult window(String name) {
    JsonNode seconds = json.path("windows").path(name).path("seconds");
    if (seconds.size() != 2) {
      return null;
    }
    return over(json, cpu, seconds.get(0).asInt(), seconds.get(1).asInt(), "ackedPerSecond");
  }

  /** Window figures of the summary ({@code windows.<name>}), missing node when there are none. */
  JsonNode windowJson(String name) {
    return json.path("windows").path(name);
  }

  /** The sum of a per-second series of the summary over this result's window. */
  double sumOver(String series) {
    long start = json.path("startEpochMillis").asLong();
    return sum(
        json.path(series), (int) ((fromMillis - start) / 1000), (int) ((toMillis - start) / 1000));
  }

  double windowSeconds() {
    return (toMillis - fromMillis) / 1000.0;
  }

  /** Units per second in the steady window. */
  double rate() {
    return windowSeconds() > 0 ? units / windowSeconds() : Double.NaN;
  }

  double cores(String label) {
    return cpu.cores(label, fromMillis, toMillis);
  }

  /** CPU microseconds of the named processes per unit completed in the window. */
  double cpuMicrosPerUnit(String... labels) {
    double seconds = 0;
    for (String label : labels) {
      seconds += cpu.cpuSeconds(label, fromMillis, toMillis);
    }
    return units > 0 ? seconds * 1e6 / units : Double.NaN;
  }
}
