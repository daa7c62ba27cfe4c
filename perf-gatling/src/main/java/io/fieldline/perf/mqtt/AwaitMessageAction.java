package io.fieldline.perf.mqtt;

import io.fieldline.perf.mqtt.MqttRunStats.Failure;
import io.gatling.core.action.Action;
import io.gatling.core.session.Session;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Takes the next inbound PUBLISH of the user's connection (one queued earlier, or the next to
 * arrive); the response time is the wait, KO when nothing arrives in time. For RPC scenarios.
 */
final class AwaitMessageAction extends MqttAction {

  private final long timeoutNanos;
  private final @Nullable String saveAs;

  AwaitMessageAction(
      String requestName,
      Action next,
      MqttComponents components,
      Duration timeout,
      @Nullable String saveAs) {
    super(requestName, next, components);
    this.timeoutNanos = timeout.toNanos();
    this.saveAs = saveAs;
  }

  @Override
  protected void send(Session session) {
    long start = clock.nowMillis();
    MqttConnection connection = MqttConnection.of(session);
    if (connection == null) {
      components.protocol().stats().failed(Failure.NOT_CONNECTED);
      ko(session, start, start, "not connected");
      return;
    }
    connection.awaitMessage(
        timeoutNanos,
        new MqttConnection.InboundCallback() {
          @Override
          public void received(MqttConnection.InboundMessage message, long latencyNanos) {
            Session next = session;
            if (saveAs != null) {
              next =
                  session
                      .set(saveAs, new String(message.payload(), StandardCharsets.UTF_8))
                      .set(saveAs + ".topic", message.topic());
            }
            ok(next, start, clock.nowMillis());
          }

          @Override
          public void timedOut() {
            components.protocol().stats().failed(Failure.TIMEOUT);
            ko(session, start, clock.nowMillis(), "no inbound message in time");
          }
        });
  }
}
