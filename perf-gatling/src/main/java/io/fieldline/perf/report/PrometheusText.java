package io.fieldline.perf.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A {@code /metrics} scrape in the Prometheus text format, as bench/run.sh saved it: sample lines
 * {@code name{labels} value}, comments skipped. Counters and histograms of several nodes, or of two
 * scrapes, are combined by adding or subtracting whole scrapes. Not thread-safe; one per file.
 */
final class PrometheusText {

  private record Sample(String name, String labels, double value) {}

  private final List<Sample> samples;

  private PrometheusText(List<Sample> samples) {
    this.samples = samples;
  }

  /** The scrape in {@code file}; an empty one when the file does not exist. */
  static PrometheusText read(Path file) {
    if (!Files.isRegularFile(file)) {
      return parse("");
    }
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * What the meters of one node gained over a window, from the periodic scrapes {@code
   * <prefix>-<epochMillis>.txt} in {@code dir}: the last scrape at or before {@code fromMillis}
   * (else the first) to the first at or after {@code toMillis} (else the last), so the span covers
   * the window plus at most one scrape interval on each side. Empty without scrapes.
   */
  static PrometheusText gainedOver(Path dir, String prefix, long fromMillis, long toMillis) {
    TreeMap<Long, Path> byMillis = new TreeMap<>();
    if (Files.isDirectory(dir)) {
      try (Stream<Path> files = Files.list(dir)) {
        files.forEach(
            file -> {
              String name = file.getFileName().toString();
              if (name.startsWith(prefix + "-") && name.endsWith(".txt")) {
                String millis = name.substring(prefix.length() + 1, name.length() - 4);
                if (millis.chars().allMatch(Character::isDigit) && !millis.isEmpty()) {
                  byMillis.put(Long.parseLong(millis), file);
                }
              }
            });
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (byMillis.size() < 2) {
      return parse("");
    }
    Map.Entry<Long, Path> first = byMillis.floorEntry(fromMillis);
    Map.Entry<Long, Path> last = byMillis.ceilingEntry(toMillis);
    Path from = first == null ? byMillis.firstEntry().getValue() : first.getValue();
    Path to = last == null ? byMillis.lastEntry().getValue() : last.getValue();
    return read(to).minus(read(from));
  }

  static PrometheusText parse(String text) {
    List<Sample> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("#")) {
        continue;
      }
      int brace = trimmed.indexOf('{');
      int space = trimmed.lastIndexOf(' ');
      if (space < 0) {
        continue;
      }
      String name;
      String labels;
      if (brace >= 0 && brace < space) {
        int close = trimmed.lastIndexOf('}');
        name = trimmed.substring(0, brace);
        labels = trimmed.substring(brace + 1, close);
      } else {
        name = trimmed.substring(0, space).strip();
        labels = "";
      }
      try {
        samples.add(new Sample(name, labels, Double.parseDouble(trimmed.substring(space + 1))));
      } catch (NumberFormatException e) {
        // Not a "name value" line (a sample with a timestamp, say): not one of the meters we read.
      }
    }
    return new PrometheusText(samples);
  }

  /** Whether the scrape holds any sample at all. */
  boolean isEmpty() {
    return samples.isEmpty();
  }

  /** This scrape with every sample of {@code other} added (other nodes' scrapes). */
  PrometheusText plus(PrometheusText other) {
    return combine(other, 1);
  }

  /** This scrape minus {@code earlier}: what counters and histograms gained in between. */
  PrometheusText minus(PrometheusText earlier) {
    return combine(earlier, -1);
  }

  private PrometheusText combine(PrometheusText other, int sign) {
    Map<String, Sample> byKey = new TreeMap<>();
    for (Sample sample : samples) {
      byKey.merge(sample.name() + "{" + sample.labels() + "}", sample, PrometheusText::add);
    }
    for (Sample sample : other.samples) {
      Sample signed = new Sample(sample.name(), sample.labels(), sign * sample.value());
      byKey.merge(sample.name() + "{" + sample.labels() + "}", signed, PrometheusText::add);
    }
    return new PrometheusText(new ArrayList<>(byKey.values()));
  }

  private static Sample add(Sample a, Sample b) {
    return new Sample(a.name(), a.labels(), a.value() + b.value());
  }

  /** Sum over every series called {@code name} (all label values). */
  double sum(String name) {
    double total = 0;
    for (Sample sample : samples) {
      if (sample.name().equals(name)) {
        total += sample.value();
      }
    }
    return total;
  }

  /**
   * Upper bound of the bucket of histogram {@code name} (the {@code _bucket} series, summed over
   * other labels) that holds quantile {@code q}: "at most this" as a histogram can say it. NaN when
   * the histogram counted nothing.
   */
  double quantileUpperBound(String name, double q) {
    Map<Double, Double> cumulative = new TreeMap<>();
    for (Sample sample : samples) {
      if (!sample.name().equals(name + "_bucket")) {
        continue;
      }
      Double le = le(sample.labels());
      if (le != null) {
        cumulative.merge(le, sample.value(), Double::sum);
      }
    }
    double total = cumulative.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
    if (total <= 0) {
      return Double.NaN;
    }
    for (Map.Entry<Double, Double> bucket : cumulative.entrySet()) {
      if (bucket.getValue() >= q * total) {
        return bucket.getKey();
      }
    }
    return Double.POSITIVE_INFINITY;
  }

  /** The largest finite bucket bound of histogram {@code name}; NaN when it has none. */
  double largestFiniteBound(String name) {
    double largest = Double.NaN;
    for (Sample sample : samples) {
      if (sample.name().equals(name + "_bucket")) {
        Double le = le(sample.labels());
        if (le != null && !le.isInfinite() && !(le <= largest)) {
          largest = le;
        }
      }
    }
    return largest;
  }

  private static @Nullable Double le(String labels) {
    for (String label : labels.split(",")) {
      String[] kv = label.split("=", 2);
      if (kv.length == 2 && kv[0].strip().equals("le")) {
        String value = kv[1].strip().replace("\"", "");
        return value.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(value);
      }
    }
    return null;
  }
}
