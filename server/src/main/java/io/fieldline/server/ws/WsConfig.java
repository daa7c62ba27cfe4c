package io.fieldline.server.ws;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * WebSocket API settings ({@code fieldline.ws}, documented in the server's reference.conf).
 *
 * @param maxSessionsPerUser open sessions of one user; one more is told so and closed
 * @param maxSubscriptionsPerSession live subscriptions of one session; one more is refused (error
 *     update), the session stays
 * @param maxQueuedUpdates updates waiting to be written to one session's socket; a client that
 *     falls this far behind is disconnected, never buffered without limit
 * @param maxMessageBytes largest command message a client may send; a larger one closes the session
 * @param authTimeout how long a new {@code /api/ws} session may take to send its {@code authCmd}
 * @param idleTimeout a session that sent nothing for this long is closed (ThingsBoard's clients
 *     send a command or keep-alive well within its 90 s)
 */
public record WsConfig(
    int maxSessionsPerUser,
    int maxSubscriptionsPerSession,
    int maxQueuedUpdates,
    int maxMessageBytes,
    Duration authTimeout,
    Duration idleTimeout) {

  /** Reads {@code fieldline.ws}. */
  public static WsConfig from(Config root) {
    ConfigReader ws = ConfigReader.of(root, "fieldline.ws");
    return ws.validated(
        new WsConfig(
            ws.integer("max-sessions-per-user", 1),
            ws.integer("max-subscriptions-per-session", 1),
            ws.integer("max-queued-updates", 1),
            (int) ws.bytes("max-message-size", 256, 16L * 1024 * 1024),
            ws.positiveDuration("auth-timeout"),
            ws.positiveDuration("idle-timeout")));
  }
}
