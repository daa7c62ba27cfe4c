package io.fieldline.server.http;

import java.time.Duration;

/**
 * The listener's connection bounds ({@code fieldline.http.*}; see {@code reference.conf}).
 *
 * @param maxConnections open connections, at most ({@code pekko.http.server.max-connections})
 * @param maxConnectionsPerAddress open connections from one source IP address, at most; 0 for no
 *     limit
 * @param headerReadTimeout how long a connection may wait for a complete request head: from its
 *     opening, or from the end of its previous response
 * @param bodyReadTimeout how long a request body may take, plus one second per {@code minBodyRate}
 *     bytes received
 * @param minBodyRate bytes per second that extend a body's deadline by one second
 */
public record HttpListenerConfig(
    int maxConnections,
    int maxConnectionsPerAddress,
    Duration headerReadTimeout,
    Duration bodyReadTimeout,
    long minBodyRate) {}
