package io.fieldline.perf.mqtt;

import io.gatling.commons.validation.Validation;
import io.gatling.core.session.Session;
import io.gatling.javaapi.core.ActionBuilder;
import io.gatling.javaapi.core.internal.Expressions;
import org.jspecify.annotations.Nullable;
import scala.Function1;

/** {@code mqtt("connect").connect().username("#{token}")}: builds a {@link ConnectAction}. */
public final class ConnectActionBuilder implements ActionBuilder {

  private final String requestName;
  private final @Nullable String username;
  private final @Nullable String password;
  private final @Nullable String clientId;

  ConnectActionBuilder(
      String requestName,
      @Nullable String username,
      @Nullable String password,
      @Nullable String clientId) {
    this.requestName = requestName;
    this.username = username;
    this.password = password;
    this.clientId = clientId;
  }

  /** MQTT username; for Fieldline the device's access token. Gatling EL, e.g. {@code #{token}}. */
  public ConnectActionBuilder username(String username) {
    return new ConnectActionBuilder(requestName, username, password, clientId);
  }

  /** MQTT password (Gatling EL); none by default. */
  public ConnectActionBuilder password(String password) {
    return new ConnectActionBuilder(requestName, username, password, clientId);
  }

  /** Client id (Gatling EL); by default the protocol's prefix plus the user id. */
  public ConnectActionBuilder clientId(String clientId) {
    return new ConnectActionBuilder(requestName, username, password, clientId);
  }

  @Override
  public io.gatling.core.action.builder.ActionBuilder asScala() {
    Function1<Session, Validation<String>> user =
        Expressions.toStringExpression(username == null ? "" : username);
    Function1<Session, Validation<String>> pass =
        password == null ? null : Expressions.toStringExpression(password);
    Function1<Session, Validation<String>> id =
        clientId == null ? null : Expressions.toStringExpression(clientId);
    return (ctx, next) ->
        new ConnectAction(
            requestName,
            next,
            ctx.protocolComponentsRegistry().components(MqttProtocolKey.INSTANCE),
            user,
            pass,
            id);
  }
}
