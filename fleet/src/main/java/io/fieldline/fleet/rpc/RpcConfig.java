package io.fieldline.fleet.rpc;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * Server-side RPC settings ({@code fieldline.rpc}, documented in this module's reference.conf).
 *
 * @param defaultTimeout a request's {@code timeout} when the caller gives none
 * @param maxTimeout the longest wait of a lightweight call ({@code timeout}, and how far ahead its
 *     {@code expirationTime} may be); more answers 400. Its HTTP request stays open that long, so
 *     it must stay 5 s under Pekko's {@code idle-timeout}
 * @param maxPending lightweight calls waiting on this node at once; more answer 429
 * @param maxPendingPerDevice lightweight calls waiting for one device on this node; more answer 429
 * @param maxPersistentTtl the furthest a persistent request's {@code expirationTime} may be
 * @param maxPersistentPerDevice persistent requests one device may have open (queued, sent, or
 *     delivered and not answered); one more answers 429, and a subscription offers at most this
 *     many stored requests
 */
public record RpcConfig(
    Duration defaultTimeout,
    Duration maxTimeout,
    int maxPending,
    int maxPendingPerDevice,
    Duration maxPersistentTtl,
    int maxPersistentPerDevice) {

  private static final String IDLE_TIMEOUT = "pekko.http.server.idle-timeout";

  /** Reads {@code fieldline.rpc}. */
  public static RpcConfig from(Config root) {
    ConfigReader rpc = ConfigReader.of(root, "fieldline.rpc");
    Duration defaultTimeout = rpc.positiveDuration("default-timeout");
    Duration maxTimeout = rpc.positiveDuration("max-timeout");
    Duration maxPersistentTtl = rpc.positiveDuration("max-persistent-ttl");
    RpcConfig config =
        new RpcConfig(
            defaultTimeout,
            maxTimeout,
            rpc.integer("max-pending", 1),
            rpc.integer("max-pending-per-device", 1),
            maxPersistentTtl,
            rpc.integer("max-persistent-per-device", 1));
    rpc.check(
        maxTimeout.compareTo(defaultTimeout) >= 0,
        "max-timeout",
        "must be at least default-timeout");
    // A lightweight call holds its HTTP connection silent until it answers: Pekko closes a
    // connection idle longer than its idle-timeout.
    if (root.hasPath(IDLE_TIMEOUT) && !"infinite".equals(root.getString(IDLE_TIMEOUT))) {
      Duration idle = root.getDuration(IDLE_TIMEOUT);
      rpc.check(
          maxTimeout.plusSeconds(5).compareTo(idle) <= 0,
          "max-timeout",
          "plus 5 s must be at most " + IDLE_TIMEOUT + " (" + idle + ")");
    }
    rpc.check(
        maxPersistentTtl.compareTo(maxTimeout) >= 0,
        "max-persistent-ttl",
        "must be at least max-timeout");
    return rpc.validated(config);
  }
}
