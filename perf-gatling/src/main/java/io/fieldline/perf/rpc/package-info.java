/**
 * The caller's side of server-side RPC runs: {@link io.fieldline.perf.rpc.RoundTripStats} counts
 * and times the REST two-way calls of a run (bench/run.sh RpcRoundTrip), the devices' side being
 * {@code respondToRpc()} of the MQTT protocol.
 */
@NullMarked
package io.fieldline.perf.rpc;

import org.jspecify.annotations.NullMarked;
