/**
 * Server-side RPC to devices: the call and its status as values, the callback its caller waits on,
 * and the port of persistent RPCs ({@link io.fieldline.common.rpc.PersistentRpcStore}, stored by
 * {@code dao-cassandra}).
 *
 * <p>Beside the message path: the REST API sends, the transports deliver, {@code cluster.events}
 * carries the progress back to the caller's node.
 */
@NullMarked
package io.fieldline.common.rpc;

import org.jspecify.annotations.NullMarked;
