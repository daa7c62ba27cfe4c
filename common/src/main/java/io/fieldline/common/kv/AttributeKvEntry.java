package io.fieldline.common.kv;

import java.util.Objects;

/**
 * An attribute value with the time it was last updated.
 *
 * @param lastUpdateTs epoch milliseconds of the update
 * @param kv the typed key/value
 */
public record AttributeKvEntry(long lastUpdateTs, KvEntry kv) {

  public AttributeKvEntry {
    Objects.requireNonNull(kv, "kv");
  }

  public String key() {
    return kv.key();
  }
}
