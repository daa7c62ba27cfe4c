/**
 * gRPC channels to the other nodes, one per peer, created on first use and closed when the peer
 * leaves. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.peer;

import org.jspecify.annotations.NullMarked;
