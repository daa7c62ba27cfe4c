package io.fieldline.server.rpc;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * Server-side RPC settings ({@code fieldline.rpc}, documented in the server's reference.conf).
 *
 * @param defaultTimeout a request's {@code timeout} when the caller gives none
 * @param maxTimeout the longest {@code timeout} (and the furthest {@code expirationTime} of a
 *     lightweight request) accepted; larger answers 400
 * @param maxPending lightweight calls waiting on this node at once; more answer 429
 * @param maxPendingPerDevice lightweight calls waiting for one device on this node; more answer 429
 * @param maxPersistentTtl the furthest a persistent request's {@code expirationTime} may be
 */
public record RpcConfig(
    Duration defaultTimeout,
    Duration maxTimeout,
    int maxPending,
    int maxPendingPerDevice,
    Duration maxPersistentTtl) {

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
            maxPersistentTtl);
    rpc.check(
        maxTimeout.compareTo(defaultTimeout) >= 0,
        "max-timeout",
        "must be at least default-timeout");
    rpc.check(
        maxPersistentTtl.compareTo(maxTimeout) >= 0,
        "max-persistent-ttl",
        "must be at least max-timeout");
    return rpc.validated(config);
  }
}
