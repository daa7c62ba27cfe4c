/**
 * Request pacing, the per-device (per-connection) rate budgets of both device transports: one
 * {@link io.fieldline.transport.common.pacing.RequestPacer} (a token bucket of {@code
 * io.fieldline.common.ratelimit}) that MQTT uses to pause reading and HTTP to refuse with 429, for
 * client-side RPC, attribute reads and firmware chunk requests.
 */
@NullMarked
package io.fieldline.transport.common.pacing;

import org.jspecify.annotations.NullMarked;
