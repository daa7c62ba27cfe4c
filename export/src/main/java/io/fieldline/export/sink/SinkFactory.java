package io.fieldline.export.sink;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** One sink type: checks configurations and builds sinks from them. */
public interface SinkFactory {

  /** {@code KAFKA} or {@code WEBHOOK}. */
  String type();

  /**
   * Checks a configuration as given over REST and returns it in stored form (defaults filled in,
   * unknown fields refused).
   *
   * @param previous the stored configuration when updating, else null: a secret left out of {@code
   *     configuration} keeps its previous value
   * @throws InvalidSinkException with a message fit for the caller (a 400)
   */
  ObjectNode validate(ObjectNode configuration, @Nullable ObjectNode previous)
      throws InvalidSinkException;

  /** The configuration as REST shows it: every secret left out. */
  ObjectNode redacted(ObjectNode stored);

  /** Names of the secret fields, for docs and tests. */
  Set<String> secretFields();

  /** Builds a sink from a stored configuration (already validated). */
  Sink create(UUID sinkId, String sinkName, ObjectNode stored);
}
