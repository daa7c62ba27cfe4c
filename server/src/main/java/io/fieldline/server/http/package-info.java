/**
 * The HTTP listener below the routes: which connections are taken ({@link HttpListener}: at most
 * {@code pekko.http.server.max-connections}, and a budget per source address), and how long a
 * connection may wait for its next request head ({@link ConnectionGuard}). It also gives the routes
 * a signal when a request's connection closes (transport-http's {@code ClientConnection}, attached
 * to every request) and counts the lines of every rate-limited log budget ({@code
 * common.log.LogThrottle}). See docs/operations.md, "Limits".
 */
@NullMarked
package io.fieldline.server.http;

import org.jspecify.annotations.NullMarked;
