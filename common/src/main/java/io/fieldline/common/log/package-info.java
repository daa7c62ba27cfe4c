/**
 * Logging helpers every module shares: {@link io.fieldline.common.log.LogThrottle}, the one
 * rate-limited log budget for lines a misbehaving client, fleet or peer could repeat without end.
 */
@NullMarked
package io.fieldline.common.log;

import org.jspecify.annotations.NullMarked;
