package io.fieldline.perf.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU and memory samples bench/run.sh took once a second: lines {@code epochMillis label pid
 * cpuTicks rssKiB}, where cpuTicks is utime + stime from {@code /proc/<pid>/stat} in clock ticks.
 * CPU time over a window is interpolated linearly between the samples around its ends.
 */
final class CpuSamples {

  private record Sample(long millis, long ticks, long rssKib) {}

  private final Map<String, List<Sample>> byLabel = new LinkedHashMap<>();
  private final double ticksPerSecond;

  private CpuSamples(double ticksPerSecond) {
    this.ticksPerSecond = ticksPerSecond;
  }

  static CpuSamples read(Path file, double ticksPerSecond) {
    CpuSamples samples = new CpuSamples(ticksPerSecond);
    if (!Files.isRegularFile(file)) {
      return samples;
    }
    try {
      for (String line : Files.readAllLines(file)) {
        String[] parts = line.trim().split("\\s+");
        if (parts.length < 5) {
          continue;
        }
        samples
            .byLabel
            .computeIfAbsent(parts[1], label -> new ArrayList<>())
            .add(
                new Sample(
                    Long.parseLong(parts[0]), Long.parseLong(parts[3]), Long.parseLong(parts[4])));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return samples;
  }

  /** Labels that have samples, in the order they first appear. */
  List<String> labels() {
    return List.copyOf(byLabel.keySet());
  }

  boolean has(String label) {
    List<Sample> samples = byLabel.get(label);
    return samples != null && samples.size() >= 2;
  }

  /** CPU seconds the process used between two instants (NaN without samples around them). */
  double cpuSeconds(String label, long fromMillis, long toMillis) {
    List<Sample> samples = byLabel.get(label);
    if (samples == null || samples.size() < 2) {
      return Double.NaN;
    }
    return (ticksAt(samples, toMillis) - ticksAt(samples, fromMillis)) / ticksPerSecond;
  }

  /** Average cores used between two instants. */
  double cores(String label, long fromMillis, long toMillis) {
    return cpuSeconds(label, fromMillis, toMillis) / ((toMillis - fromMillis) / 1000.0);
  }

  /** Largest resident set seen, in MiB (NaN without samples). */
  double maxRssMib(String label) {
    List<Sample> samples = byLabel.get(label);
    if (samples == null || samples.isEmpty()) {
      return Double.NaN;
    }
    return samples.stream().mapToLong(Sample::rssKib).max().orElse(0) / 1024.0;
  }

  private static double ticksAt(List<Sample> samples, long millis) {
    Sample before = samples.get(0);
    if (millis <= before.millis()) {
      return before.ticks();
    }
    for (Sample after : samples) {
      if (after.millis() >= millis) {
        double span = after.millis() - before.millis();
        double share = span == 0 ? 1 : (millis - before.millis()) / span;
        return before.ticks() + share * (after.ticks() - before.ticks());
      }
      before = after;
    }
    return before.ticks();
  }
}
