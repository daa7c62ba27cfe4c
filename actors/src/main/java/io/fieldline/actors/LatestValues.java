package io.fieldline.actors;

import io.fieldline.common.TsKvEntry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The latest value of each time-series key of one device, as its {@link Device} actor knows it:
 * restored from the store, then advanced by every write the store confirmed. A value never
 * regresses to an older timestamp, whatever order restores and writes complete in; a later value
 * with the same timestamp replaces the earlier one, as the store's overwrite does. Confined to its
 * device actor.
 */
final class LatestValues {

  private final Map<String, TsKvEntry> byKey = new HashMap<>();

  /** Takes each entry that is at least as new as the one known for its key. */
  void advance(List<TsKvEntry> entries) {
    for (TsKvEntry entry : entries) {
      byKey.merge(entry.key(), entry, (known, next) -> next.ts() >= known.ts() ? next : known);
    }
  }

  /** An immutable copy, safe to send to another actor. */
  Map<String, TsKvEntry> snapshot() {
    return Map.copyOf(byKey);
  }
}
