package io.fieldline.common.credentials;

import io.fieldline.common.DeviceId;
import java.util.concurrent.CompletionStage;

/**
 * Makes what authenticated a device before stop working at once, after its credential was replaced
 * or the device deleted: every node forgets its cached lookups of the device (token, basic login,
 * certificate) and closes its MQTT session of it, so the device must connect again with what is
 * stored now. The REST API calls it after the change is stored; a single node does it locally, a
 * cluster implementation also tells every other node.
 */
@FunctionalInterface
public interface CredentialsRevocation {

  /**
   * Revokes {@code device}'s cached lookups and open sessions. Must not block.
   *
   * @return completes once this node and every other node that answered in time have done it; never
   *     completes exceptionally (a node that could not be told is logged and counted by the
   *     implementation, and keeps serving its cache until the cache's ttl expires)
   */
  CompletionStage<Void> revoke(DeviceId device);

  /**
   * Revokes {@code device} once {@code change} (a replacement of its credential, or its delete) has
   * completed, whatever its outcome: a change that failed, a timeout say, may still have been
   * applied, and revoking is idempotent.
   *
   * @return completes as {@code change} did, once the revocation has completed
   */
  default <T> CompletionStage<T> revokeAfter(DeviceId device, CompletionStage<T> change) {
    return change
        .handle((result, error) -> null)
        .thenCompose(settled -> revoke(device))
        .thenCompose(revoked -> change);
  }
}
