package io.fieldline.server.ws;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * WebSocket API settings ({@code fieldline.ws}, documented in the server's reference.conf).
 *
 * @param maxSessionsPerUser open sessions of one user; one more is told so and closed
 * @param maxSessions open sessions of this node, authenticated or not; one more is told so and
 *     closed
 * @param maxSubscriptionsPerSession live subscriptions of one session; one more is refused (error
 *     update), the session stays
 * @param maxQueuedUpdates updates waiting to be written to one session's socket; a client that
 *     falls this far behind is disconnected, never buffered without limit
 * @param maxQueuedBytes bytes (UTF-8, as framed) of updates waiting for one session's socket, the
 *     same way (one update always fits an empty queue)
 * @param maxKeysPerCommand keys one command may name; a command naming more is refused
 * @param memoryBudget bytes of heap all WebSocket sessions of this node may hold (subscriptions'
 *     keys and per-key state, queued updates); what does not fit is refused
 * @param maxHistoryReads one-shot {@code TIMESERIES_HISTORY} reads of one session at once
 * @param maxSubscriptionReads first reads of new subscriptions of one session at once; beyond, the
 *     session's next commands wait and its socket is not read
 * @param maxMessageBytes largest command message a client may send; a larger one closes the session
 * @param authTimeout how long a new {@code /api/ws} session may take to send its {@code authCmd}
 * @param idleTimeout a session that sent nothing for this long is closed (ThingsBoard's clients
 *     send a command or keep-alive well within its 90 s)
 * @param watchRefresh how often a node announces the devices it watches again (repairs a lost
 *     announcement; a watch not announced for three intervals is forgotten)
 */
public record WsConfig(
    int maxSessionsPerUser,
    int maxSessions,
    int maxSubscriptionsPerSession,
    int maxQueuedUpdates,
    long maxQueuedBytes,
    int maxKeysPerCommand,
    long memoryBudget,
    int maxHistoryReads,
    int maxSubscriptionReads,
    int maxMessageBytes,
    Duration authTimeout,
    Duration idleTimeout,
    Duration watchRefresh) {

  /** Reads {@code fieldline.ws}; the memory budget from the heap's maximum size. */
  public static WsConfig from(Config root) {
    return from(root, Runtime.getRuntime().maxMemory());
  }

  /**
   * Reads {@code fieldline.ws}: {@code memory-budget}, or when it is 0 {@code memory-heap-percent}
   * of {@code maxHeap}.
   */
  static WsConfig from(Config root, long maxHeap) {
    ConfigReader ws = ConfigReader.of(root, "fieldline.ws");
    long budget = ws.bytes("memory-budget", 0, Long.MAX_VALUE);
    int percent = ws.integer("memory-heap-percent", 1, 90);
    return ws.validated(
        new WsConfig(
            ws.integer("max-sessions-per-user", 1),
            ws.integer("max-sessions", 1),
            ws.integer("max-subscriptions-per-session", 1),
            ws.integer("max-queued-updates", 1),
            ws.bytes("max-queued-bytes", 1024, Long.MAX_VALUE),
            ws.integer("max-keys-per-command", 1, 10_000),
            budget > 0 ? budget : maxHeap / 100 * percent,
            ws.integer("max-history-reads", 1),
            ws.integer("max-subscription-reads", 1),
            (int) ws.bytes("max-message-size", 256, 16L * 1024 * 1024),
            ws.positiveDuration("auth-timeout"),
            ws.positiveDuration("idle-timeout"),
            ws.positiveDuration("watch-refresh")));
  }
}
