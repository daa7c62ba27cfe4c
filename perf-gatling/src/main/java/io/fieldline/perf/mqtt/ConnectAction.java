package io.fieldline.perf.mqtt;

import io.fieldline.perf.mqtt.MqttRunStats.Failure;
import io.gatling.commons.validation.Validation;
import io.gatling.core.action.Action;
import io.gatling.core.session.Session;
import org.jspecify.annotations.Nullable;
import scala.Function1;
import scala.Option;

/**
 * Opens the user's connection on its own event loop; reported as one request from the TCP connect
 * to the CONNACK, KO on refusal, timeout or connect error. A connection the user already holds is
 * closed first. After a {@code drop()}, the new connection reports its first PUBACK's distance from
 * the drop ({@code resumeAfterDropMillis}); a refused attempt keeps the drop time for the next.
 */
final class ConnectAction extends MqttAction {

  private final Function1<Session, Validation<String>> username;
  private final @Nullable Function1<Session, Validation<String>> password;
  private final @Nullable Function1<Session, Validation<String>> clientId;

  ConnectAction(
      String requestName,
      Action next,
      MqttComponents components,
      Function1<Session, Validation<String>> username,
      @Nullable Function1<Session, Validation<String>> password,
      @Nullable Function1<Session, Validation<String>> clientId) {
    super(requestName, next, components);
    this.username = username;
    this.password = password;
    this.clientId = clientId;
  }

  @Override
  protected void send(Session session) {
    MqttConnection previous = MqttConnection.of(session);
    if (previous != null) {
      previous.disconnect();
    }
    String user = resolve(username, session);
    if (user == null) {
      return;
    }
    String pass = null;
    if (password != null) {
      pass = resolve(password, session);
      if (pass == null) {
        return;
      }
    }
    String id = components.protocol().clientIdPrefix() + session.userId();
    if (clientId != null) {
      id = resolve(clientId, session);
      if (id == null) {
        return;
      }
    }
    Session base = session.remove(MqttConnection.ATTRIBUTE);
    Option<Object> dropped = session.attributes().get(MqttConnection.DROPPED_AT);
    long droppedAt = dropped.isDefined() ? (Long) dropped.get() : 0L;
    long start = clock.nowMillis();
    MqttConnection.open(
        components,
        session.userId(),
        components.broker(session.userId()),
        components.source(session.userId()),
        session.eventLoop(),
        id,
        user,
        pass,
        droppedAt,
        new MqttConnection.ConnectCallback() {
          @Override
          public void connected(MqttConnection connection, long latencyNanos) {
            ok(
                base.remove(MqttConnection.DROPPED_AT).set(MqttConnection.ATTRIBUTE, connection),
                start,
                clock.nowMillis());
          }

          @Override
          public void failed(Failure failure, String message) {
            ko(base, start, clock.nowMillis(), message);
          }
        });
  }
}
