/**
 * Live data (the WebSocket API's device events) in the fleet module: who watches which device
 * across the cluster, and the publication of what a device's actor stored ({@link
 * io.fieldline.fleet.live.LiveData}). Its {@code publishing} decorator wraps common's {@code
 * TelemetryStore} on the same floor as the actors that write through it: the server builds it over
 * the Cassandra store and hands the decorated store to the device tier, so the write path never
 * reaches up into the server. Depends on common's ports only.
 */
@NullMarked
package io.fieldline.fleet.live;

import org.jspecify.annotations.NullMarked;
