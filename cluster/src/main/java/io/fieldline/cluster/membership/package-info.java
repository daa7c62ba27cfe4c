/**
 * ZooKeeper membership through Curator: this node's ephemeral znode and the watched set of all
 * members. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.membership;

import org.jspecify.annotations.NullMarked;
