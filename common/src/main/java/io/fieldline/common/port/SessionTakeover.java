package io.fieldline.common.port;

import io.fieldline.common.DeviceId;

/**
 * One session per device across the cluster. The transport calls {@link #sessionOpened} when a
 * device's connection is accepted on this node; a cluster implementation tells the other nodes to
 * close their sessions of that device (each node's transport already closes older local sessions
 * itself). Must not block.
 */
@FunctionalInterface
public interface SessionTakeover {

  /** A single node: nothing to tell anyone. */
  SessionTakeover LOCAL_ONLY = device -> {};

  void sessionOpened(DeviceId device);
}
