package io.fieldline.actors;

import io.fieldline.common.kv.TsKvEntry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The latest value of each time-series key of one device, as its {@link Device} actor knows it:
 * every write the store confirmed, merged with the store's values when they were read. A value
 * never regresses to an older timestamp, whatever order reads and writes complete in; a confirmed
 * write with the same timestamp replaces the earlier one, as the store's overwrite does, while a
 * read never replaces a value of the same timestamp (it may have been issued before that write).
 * Confined to its device actor.
 */
final class LatestValues {

  private final Map<String, TsKvEntry> byKey = new HashMap<>();

  /** Takes each entry that is at least as new as the one known for its key. */
  void advance(List<TsKvEntry> entries) {
    for (TsKvEntry entry : entries) {
      byKey.merge(entry.key(), entry, (known, next) -> next.ts() >= known.ts() ? next : known);
    }
  }

  /** Takes each stored entry that is newer than the one known for its key. */
  void mergeStored(List<TsKvEntry> entries) {
    for (TsKvEntry entry : entries) {
      byKey.merge(entry.key(), entry, (known, stored) -> stored.ts() > known.ts() ? stored : known);
    }
  }

  /** An immutable copy, safe to send to another actor. */
  Map<String, TsKvEntry> snapshot() {
    return Map.copyOf(byKey);
  }
}
