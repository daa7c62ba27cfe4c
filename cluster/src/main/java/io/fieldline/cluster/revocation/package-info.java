/**
 * A changed credential stops working on every node at once: the notices sent to the other nodes
 * when a device's credential is replaced or the device deleted ({@link
 * io.fieldline.cluster.revocation.GrpcCredentialsRevocation}, the cluster's {@link
 * io.fieldline.common.credentials.CredentialsRevocation}), and the service that receives them
 * ({@link io.fieldline.cluster.revocation.RevocationService}) and runs this node's own revocation
 * (forget the cached lookups, close the session), which the composition root provides.
 *
 * <p>Beside the message path: it runs when an administrator changes a credential. Channels come
 * from {@code peer}. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.revocation;

import org.jspecify.annotations.NullMarked;
