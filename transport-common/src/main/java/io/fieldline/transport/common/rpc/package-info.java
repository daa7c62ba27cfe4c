/**
 * Client-side RPC the server answers itself ({@code getSessionLimits}, {@code getCurrentTime}): one
 * {@link io.fieldline.transport.common.rpc.ClientRpcAnswers} for both device transports, called on
 * their threads before anything reaches a device actor.
 */
@NullMarked
package io.fieldline.transport.common.rpc;

import org.jspecify.annotations.NullMarked;
