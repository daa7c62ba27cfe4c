package io.fieldline.cassandra.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * The three TCP ports one node listens on, all on 127.0.0.1. Chosen once per {@link
 * EmbeddedCassandra} (at its first start) and then kept, so that clients can reconnect after a
 * restart.
 */
record CassandraPorts(int cql, int storage, int sslStorage) {

  static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  /**
   * Fixed ports as configured; each 0 becomes a distinct port that is free right now. A free port
   * can still be taken by someone else before Cassandra binds it: {@link EmbeddedCassandra} checks
   * again just before launching.
   */
  static CassandraPorts choose(int cqlWanted, int storageWanted) {
    Set<Integer> taken = new HashSet<>();
    taken.add(cqlWanted);
    taken.add(storageWanted);
    int cql = cqlWanted != 0 ? cqlWanted : freePort(taken);
    int storage = storageWanted != 0 ? storageWanted : freePort(taken);
    int sslStorage = freePort(taken);
    return new CassandraPorts(cql, storage, sslStorage);
  }

  /** The first port of these that something else is listening on, or 0. */
  int firstBusy() {
    for (int port : new int[] {cql, storage, sslStorage}) {
      if (!isFree(port)) {
        return port;
      }
    }
    return 0;
  }

  InetSocketAddress cqlAddress() {
    return new InetSocketAddress(LOOPBACK, cql);
  }

  static boolean isFree(int port) {
    try {
      new ServerSocket(port, 1, LOOPBACK).close();
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort(Set<Integer> taken) {
    while (true) {
      int port;
      try (ServerSocket socket = new ServerSocket(0, 1, LOOPBACK)) {
        port = socket.getLocalPort();
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot bind any port on " + LOOPBACK, e);
      }
      if (taken.add(port)) {
        return port;
      }
    }
  }
}
