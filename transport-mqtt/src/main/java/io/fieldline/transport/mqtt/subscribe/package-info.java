/**
 * Beside the message path: SUBSCRIBE and UNSUBSCRIBE of a connected session. {@link
 * io.fieldline.transport.mqtt.subscribe.Subscriptions} grants the filters of the ThingsBoard device
 * API ({@code SubscriptionFilters}) and keeps them in the session's state. Where downlink delivery
 * (attribute pushes, server-side RPC) will start from.
 */
@NullMarked
package io.fieldline.transport.mqtt.subscribe;

import org.jspecify.annotations.NullMarked;
