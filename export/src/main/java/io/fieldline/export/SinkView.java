package io.fieldline.export;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.UUID;

/**
 * A sink as REST and the console show it: its secrets left out.
 *
 * @param configuration the type's settings without secret fields
 */
public record SinkView(
    UUID id,
    String name,
    String type,
    ObjectNode filter,
    ObjectNode configuration,
    boolean paused,
    long createdTime,
    long updatedTime,
    SinkStatus status) {}
