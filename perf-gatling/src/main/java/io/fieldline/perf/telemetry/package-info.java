/** ThingsBoard telemetry payloads for load tests. */
@NullMarked
package io.fieldline.perf.telemetry;

import org.jspecify.annotations.NullMarked;
