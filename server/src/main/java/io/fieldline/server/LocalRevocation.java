package io.fieldline.server;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.port.SessionCloser;
import io.fieldline.dao.cassandra.CassandraStorage;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's half of a credentials revocation: the storage tier's cache forgets its lookups of the
 * device, then the transport's session registry closes the device's session here, if it has one
 * (close reason {@code credentials_revoked}: MQTT 5 DISCONNECT 0x87). In that order, so a device
 * that reconnects at once meets an empty cache, not its old credential. Run after every credential
 * replacement and device delete, whatever its outcome (a failed one may have been applied); both
 * steps are idempotent. On a single node it is the whole revocation; in a cluster the cluster node
 * runs it first, and for every notice from another node. Never blocks (the close itself happens on
 * the channel's event loop).
 *
 * <p>A CONNECT whose lookup answered just before {@code forget} and whose session is registered
 * just after {@code revokeSession} keeps its session: a known window, documented in cluster.md,
 * until credentials carry a version.
 *
 * @param storage whose credential cache forgets the device
 * @param sessions closes this node's MQTT session of the device
 */
record LocalRevocation(CassandraStorage storage, SessionCloser sessions)
    implements CredentialsRevocation {

  private static final Logger LOG = LoggerFactory.getLogger(LocalRevocation.class);

  @Override
  public CompletionStage<Void> revoke(DeviceId device) {
    storage.forgetDevice(device);
    if (sessions.revokeSession(device)) {
      LOG.info("[device|{}] credentials revoked: its session here is closed", device);
    }
    return CompletableFuture.completedFuture(null);
  }
}
