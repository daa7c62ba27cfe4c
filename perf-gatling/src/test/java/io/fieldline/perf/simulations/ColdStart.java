package io.fieldline.perf.simulations;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link DevicesAtRate} started against a server that has just become ready (bench/run.sh
 * ColdStart: fresh data directory, so a cold JVM and a cold Cassandra), with nothing left out: the
 * first {@code cold} seconds from the first connection attempt (connects, JIT, first token lookups,
 * first writes) are reported as window {@code cold}, the next {@code cold} seconds as {@code warm},
 * which is also the steady window of the usual table; window {@code run} is the whole run. The
 * summary says {@code pointsPerMessage} 1, so the report's per-point table (CPU per point, points
 * per second per core) sits beside {@link GatewayFleet}'s.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.ColdStart \
 *   -Dfeeder=devices.csv -Ddevices=1000 -DratePerDevice=1 -Dduration=120 -Dcold=60 -Dport=1883
 * </pre>
 */
public class ColdStart extends DevicesAtRate {

  @Override
  int[] steadyWindowSeconds() {
    return warmWindow(settings);
  }

  @Override
  Map<String, int[]> namedWindows() {
    return coldWarmAndRun(settings);
  }

  @Override
  Map<String, Object> summaryExtra() {
    // One device message is one point: the report's per-point table, beside GatewayFleet's.
    return Map.of("pointsPerMessage", 1);
  }

  /**
   * {@code cold} {@code [0, cold)}, {@code warm} ({@link #warmWindow}) and {@code run} (from the
   * first connection attempt until the last device has published for the duration).
   */
  static Map<String, int[]> coldWarmAndRun(SimulationSettings settings) {
    Map<String, int[]> windows = new LinkedHashMap<>();
    windows.put("cold", new int[] {0, (int) settings.cold().toSeconds()});
    windows.put("warm", warmWindow(settings));
    windows.put(
        "run",
        new int[] {0, (int) (settings.ramp().toSeconds() + settings.duration().toSeconds() + 1)});
    return windows;
  }

  /** {@code [cold, 2 cold)}, cut at the end of the publishing time. */
  static int[] warmWindow(SimulationSettings settings) {
    int cold = (int) settings.cold().toSeconds();
    return new int[] {cold, Math.min(2 * cold, (int) settings.duration().toSeconds())};
  }
}
