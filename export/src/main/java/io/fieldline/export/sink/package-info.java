/**
 * Sink types: a {@link io.fieldline.export.sink.SinkFactory} per type validates a sink's
 * configuration and builds its {@link io.fieldline.export.sink.Sink}.
 */
@NullMarked
package io.fieldline.export.sink;

import org.jspecify.annotations.NullMarked;
