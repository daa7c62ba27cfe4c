/**
 * The rate limits of every module, one implementation: token buckets from Bucket4j ({@link
 * io.fieldline.common.ratelimit.Rate}, {@link io.fieldline.common.ratelimit.TokenBuckets}), held
 * per key (source address, user name, device) in bounded Caffeine tables ({@link
 * io.fieldline.common.ratelimit.BoundedTables}) that forget a key once it is idle, and fixed-window
 * failure counts ({@link io.fieldline.common.ratelimit.FailureWindows}) for lockouts. Used by the
 * device transports' request pacing and pre-authentication budgets, provisioning and the REST login
 * throttle. Every clock is a nano clock ({@link System#nanoTime()} in production, a test clock in
 * tests), so tests are deterministic.
 */
@NullMarked
package io.fieldline.common.ratelimit;

import org.jspecify.annotations.NullMarked;
