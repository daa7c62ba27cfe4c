/**
 * Ports of the message path: the device inbox a transport submits to, the telemetry store the
 * actors write to, session control and the pressure gauge.
 */
@NullMarked
package io.fieldline.common.port;

import org.jspecify.annotations.NullMarked;
