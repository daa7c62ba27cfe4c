/** The storage ceiling: the rows of a scenario written straight through the Cassandra driver. */
@NullMarked
package io.fieldline.perf.raw;

import org.jspecify.annotations.NullMarked;
