/**
 * Beside the message path: SUBSCRIBE and UNSUBSCRIBE of a connected session. {@link
 * io.fieldline.transport.mqtt.subscribe.Subscriptions} grants the filters of the ThingsBoard device
 * API ({@code SubscriptionFilters}) and keeps them in the session's state, where the downlink reads
 * them to decide what it sends.
 */
@NullMarked
package io.fieldline.transport.mqtt.subscribe;

import org.jspecify.annotations.NullMarked;
