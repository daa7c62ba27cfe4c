package io.fieldline.perf.verify;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * One line of the acknowledgement ledger a simulation writes ({@code
 * io.fieldline.perf.mqtt.AckLedger}): the connection's username (device token), the device
 * timestamp of its message 0, how many messages it sent, and which were acknowledged.
 */
public record LedgerEntry(String username, long baseTs, long sent, BitSet acked) {

  /** Reads a ledger file (header line first). */
  public static List<LedgerEntry> read(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      List<LedgerEntry> entries = new ArrayList<>(lines.size());
      for (String line : lines.subList(1, lines.size())) {
        if (!line.isBlank()) {
          entries.add(parse(line));
        }
      }
      return entries;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parses {@code username,baseTs,sent,first-last|first-last}. */
  public static LedgerEntry parse(String line) {
    String[] parts = line.split(",", -1);
    long sent = Long.parseLong(parts[2]);
    if (sent > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("too many messages on one connection: " + sent);
    }
    BitSet acked = new BitSet((int) sent);
    if (!parts[3].isEmpty()) {
      for (String range : parts[3].split("\\|")) {
        int dash = range.indexOf('-');
        int first = Integer.parseInt(range.substring(0, dash));
        int last = Integer.parseInt(range.substring(dash + 1));
        acked.set(first, last + 1);
      }
    }
    return new LedgerEntry(parts[0], Long.parseLong(parts[1]), sent, acked);
  }

  public long ackedCount() {
    return acked.cardinality();
  }
}
