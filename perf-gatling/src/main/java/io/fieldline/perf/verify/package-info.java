/** Checks that every message the broker acknowledged is stored in Cassandra. */
@NullMarked
package io.fieldline.perf.verify;

import org.jspecify.annotations.NullMarked;
