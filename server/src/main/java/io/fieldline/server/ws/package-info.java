/**
 * ThingsBoard's WebSocket telemetry API (docs/websocket-api.md), mounted beside the REST API: one
 * {@code WsSession} per connection runs its commands and subscriptions and writes their updates to
 * a bounded queue in front of the socket (Pekko HTTP).
 */
@NullMarked
package io.fieldline.server.ws;

import org.jspecify.annotations.NullMarked;
