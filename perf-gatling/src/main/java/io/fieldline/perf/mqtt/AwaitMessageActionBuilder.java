package io.fieldline.perf.mqtt;

import io.gatling.javaapi.core.ActionBuilder;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** {@code mqtt("rpc request").awaitMessage(Duration.ofSeconds(5)).saveAs("rpc")}. */
public final class AwaitMessageActionBuilder implements ActionBuilder {

  private final String requestName;
  private final Duration timeout;
  private final @Nullable String saveAs;

  AwaitMessageActionBuilder(String requestName, Duration timeout, @Nullable String saveAs) {
    if (timeout.isZero() || timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must be positive: " + timeout);
    }
    this.requestName = requestName;
    this.timeout = timeout;
    this.saveAs = saveAs;
  }

  /**
   * Stores the message in the session: {@code <name>} = payload as UTF-8 text, {@code <name>.topic}
   * = its topic.
   */
  public AwaitMessageActionBuilder saveAs(String attribute) {
    return new AwaitMessageActionBuilder(requestName, timeout, attribute);
  }

  @Override
  public io.gatling.core.action.builder.ActionBuilder asScala() {
    return (ctx, next) ->
        new AwaitMessageAction(
            requestName,
            next,
            ctx.protocolComponentsRegistry().components(MqttProtocolKey.INSTANCE),
            timeout,
            saveAs);
  }
}
