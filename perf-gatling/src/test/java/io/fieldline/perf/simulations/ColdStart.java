package io.fieldline.perf.simulations;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link DevicesAtRate} started against a server that has just become ready (bench/run.sh
 * ColdStart: fresh data directory, so a cold JVM and a cold Cassandra), with nothing left out: the
 * first {@code cold} seconds from the first connection attempt (connects, JIT, first token lookups,
 * first writes) are reported as window {@code cold}, the next {@code cold} seconds as {@code warm},
 * which is also the steady window of the usual table.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.ColdStart \
 *   -Dfeeder=devices.csv -Ddevices=1000 -DratePerDevice=1 -Dduration=120 -Dcold=60 -Dport=1883
 * </pre>
 */
public class ColdStart extends DevicesAtRate {

  @Override
  int[] steadyWindowSeconds() {
    return warmWindow();
  }

  @Override
  Map<String, int[]> namedWindows() {
    Map<String, int[]> windows = new LinkedHashMap<>();
    windows.put("cold", new int[] {0, (int) settings.cold().toSeconds()});
    windows.put("warm", warmWindow());
    return windows;
  }

  /** {@code [cold, 2 cold)}, cut at the end of the publishing time. */
  private int[] warmWindow() {
    int cold = (int) settings.cold().toSeconds();
    return new int[] {cold, Math.min(2 * cold, (int) settings.duration().toSeconds())};
  }
}
