/**
 * The way out (issue 28): the change feed delivered to sinks. {@link
 * io.fieldline.export.ExportRecord} is what a sink sends; {@code sink} holds the sink types.
 */
@NullMarked
package io.fieldline.export;

import org.jspecify.annotations.NullMarked;
