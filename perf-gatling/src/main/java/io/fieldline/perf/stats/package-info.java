/** What the run statistics of several packages share: per-second counts. */
@NullMarked
package io.fieldline.perf.stats;

import org.jspecify.annotations.NullMarked;
