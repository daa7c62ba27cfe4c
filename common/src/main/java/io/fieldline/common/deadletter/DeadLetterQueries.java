package io.fieldline.common.deadletter;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Reads back what {@link DeadLetterStore} kept, for the REST API. A port of its own rather than a
 * read method on {@link DeadLetterStore}: the transport only writes dead letters, so it depends on
 * the write port alone (and its test fakes implement one method).
 */
public interface DeadLetterQueries {

  /**
   * The device's newest dead letters, newest first, at most {@code limit}; fails with {@link
   * StoreException} when storage cannot answer.
   *
   * @throws IllegalArgumentException (synchronously) if {@code limit < 1}
   */
  CompletionStage<List<StoredDeadLetter>> list(DeviceId deviceId, int limit);
}
