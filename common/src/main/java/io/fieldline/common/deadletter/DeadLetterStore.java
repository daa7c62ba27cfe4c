package io.fieldline.common.deadletter;

import io.fieldline.common.StoreException;
import java.util.concurrent.CompletionStage;

/**
 * Durable storage for payloads that could not be parsed (see {@link DeadLetter}); the transport
 * writes through it. Reading them back is {@link DeadLetterQueries}.
 */
public interface DeadLetterStore {

  /** Stores the dead letter; completes when it is written, fails with {@link StoreException}. */
  CompletionStage<Void> write(DeadLetter deadLetter);
}
