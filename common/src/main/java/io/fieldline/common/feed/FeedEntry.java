package io.fieldline.common.feed;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.List;
import java.util.Objects;

/**
 * One stored message as the change feed holds it: written with the message's rows, before the
 * message is acknowledged.
 *
 * <p>{@link #position()} orders the entries of one log (one per writing process); {@link #seq()} is
 * the per-device sequence number, a hybrid clock in microseconds: strictly increasing on the node
 * that wrote it, and across nodes as long as their clocks agree (see docs/export.md). An entry
 * reserves {@link #seqCount()} consecutive numbers, one for each record it becomes.
 */
public sealed interface FeedEntry {

  /** Position in its log, from 1, without gaps except where a write failed. */
  long position();

  /** The first sequence number of the entry (microseconds since the epoch, hybrid clock). */
  long seq();

  DeviceId deviceId();

  /** How many sequence numbers the entry reserved: {@code seq() .. seq() + seqCount() - 1}. */
  int seqCount();

  /** Time-series values; records are made per distinct timestamp, in order of first appearance. */
  record Telemetry(long position, long seq, DeviceId deviceId, List<TsKvEntry> entries)
      implements FeedEntry {
    public Telemetry {
      Objects.requireNonNull(deviceId, "deviceId");
      entries = List.copyOf(entries);
    }

    @Override
    public int seqCount() {
      return (int) entries.stream().mapToLong(TsKvEntry::ts).distinct().count();
    }
  }

  /** Attributes of one scope, updated at {@code ts}. */
  record Attributes(
      long position,
      long seq,
      DeviceId deviceId,
      AttributeScope scope,
      long ts,
      List<KvEntry> entries)
      implements FeedEntry {
    public Attributes {
      Objects.requireNonNull(deviceId, "deviceId");
      Objects.requireNonNull(scope, "scope");
      entries = List.copyOf(entries);
    }

    @Override
    public int seqCount() {
      return 1;
    }
  }
}
