package io.fieldline.common.feed;

import java.util.Objects;
import java.util.UUID;

/**
 * A sink as stored: its type-specific parts are JSON text that the export module reads.
 *
 * @param id the sink's id
 * @param name a unique, human-readable name
 * @param type {@code KAFKA} or {@code WEBHOOK}
 * @param filterJson which records it takes (JSON object)
 * @param configurationJson how it delivers, secrets included (JSON object; never shown over REST)
 * @param paused whether delivery is paused by an operator
 * @param createdTime epoch milliseconds
 * @param updatedTime epoch milliseconds of the last change of any field
 * @param replayFrom epoch milliseconds from which the last replay delivers again (0: none)
 * @param generation how many replays were asked for: cursors of an older generation are void
 */
public record SinkDefinition(
    UUID id,
    String name,
    String type,
    String filterJson,
    String configurationJson,
    boolean paused,
    long createdTime,
    long updatedTime,
    long replayFrom,
    int generation) {
  public SinkDefinition {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(filterJson, "filterJson");
    Objects.requireNonNull(configurationJson, "configurationJson");
  }
}
