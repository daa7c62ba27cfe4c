/** Turns one bench/run.sh run directory into the summary table of docs/performance.md. */
@NullMarked
package io.fieldline.perf.report;

import org.jspecify.annotations.NullMarked;
