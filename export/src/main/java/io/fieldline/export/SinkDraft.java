package io.fieldline.export;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * A sink as a caller describes it when creating or updating (docs/export.md).
 *
 * @param name unique among sinks
 * @param type {@code KAFKA} or {@code WEBHOOK}
 * @param filter which records it takes: {@code deviceTypes}, {@code deviceProfileIds}, {@code
 *     keys}, {@code kinds} (each optional; empty object = everything)
 * @param configuration the type's settings, secrets included
 */
public record SinkDraft(String name, String type, ObjectNode filter, ObjectNode configuration) {
  public SinkDraft {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(configuration, "configuration");
  }
}
