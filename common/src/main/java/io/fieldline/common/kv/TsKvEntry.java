package io.fieldline.common.kv;

import java.util.Objects;

/**
 * A value of one key at one time.
 *
 * @param ts epoch milliseconds (device-supplied, or the server's receive time)
 * @param kv the typed key/value
 */
public record TsKvEntry(long ts, KvEntry kv) {

  public TsKvEntry {
    Objects.requireNonNull(kv, "kv");
  }

  public String key() {
    return kv.key();
  }
}
