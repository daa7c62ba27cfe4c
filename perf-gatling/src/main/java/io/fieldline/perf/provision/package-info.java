/** Creates load-test devices through Fieldline's bulk REST call and writes the Gatling feeder. */
@NullMarked
package io.fieldline.perf.provision;

import org.jspecify.annotations.NullMarked;
