package io.fieldline.perf.mqtt;

import java.util.Arrays;

/**
 * Which messages of one connection were acknowledged: the connection numbers its PUBLISHes 0, 1, 2,
 * ... and the device timestamp of message {@code n} is {@code baseTs + n}, so the rows of an
 * acknowledged message can be looked up in storage exactly. Acknowledged sequence numbers are kept
 * as inclusive ranges (PUBACKs arrive in order, so there is one range unless some timed out).
 *
 * <p>Confined to the connection's event loop while the run lasts; read after the run.
 */
public final class AckLedger {

  private final String username;
  private final long baseTs;
  private long sent;
  private long[] ranges = new long[2];
  private int rangeCount;

  AckLedger(String username, long baseTs) {
    this.username = username;
    this.baseTs = baseTs;
  }

  /** The MQTT username (the device's access token). */
  public String username() {
    return username;
  }

  /** Device timestamp of message 0; message n carries {@code baseTs + n}. */
  public long baseTs() {
    return baseTs;
  }

  /** Messages handed out (sequence numbers 0 .. sent-1). */
  public long sent() {
    return sent;
  }

  long nextSequence() {
    return sent++;
  }

  void acked(long sequence) {
    if (rangeCount > 0 && ranges[2 * rangeCount - 1] == sequence - 1) {
      ranges[2 * rangeCount - 1] = sequence;
      return;
    }
    if (2 * rangeCount == ranges.length) {
      ranges = Arrays.copyOf(ranges, ranges.length * 2);
    }
    ranges[2 * rangeCount] = sequence;
    ranges[2 * rangeCount + 1] = sequence;
    rangeCount++;
  }

  /** Number of acknowledged messages. */
  public long ackedCount() {
    long count = 0;
    for (int i = 0; i < rangeCount; i++) {
      count += ranges[2 * i + 1] - ranges[2 * i] + 1;
    }
    return count;
  }

  /** Acknowledged sequence numbers as {@code first-last} ranges joined by {@code |}. */
  public String ackedRanges() {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < rangeCount; i++) {
      if (i > 0) {
        out.append('|');
      }
      out.append(ranges[2 * i]).append('-').append(ranges[2 * i + 1]);
    }
    return out.toString();
  }

  /** One line of the ledger file: {@code username,baseTs,sent,ranges}. */
  String toCsvLine() {
    return username + ',' + baseTs + ',' + sent + ',' + ackedRanges();
  }
}
