/**
 * Reading stored data: the telemetry query port, history queries and aggregations, pages of
 * results, the read refusal.
 */
@NullMarked
package io.fieldline.common.query;

import org.jspecify.annotations.NullMarked;
