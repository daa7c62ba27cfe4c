package io.fieldline.transport.mqtt.gateway;

import io.fieldline.transport.mqtt.MqttMetrics.GatewayRefusal;
import java.util.Objects;

/**
 * A gateway PUBLISH refused whole because it exceeds a bound of the gateway's session: thrown
 * synchronously, before anything of the message is stored, and handled by the publish path like an
 * invalid payload (dead-lettered and acknowledged, or the connection closed, by the {@code
 * invalid-payload} policy; MQTT 5 acknowledgements carry 0x97 quota exceeded).
 */
public final class GatewayRefusedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final GatewayRefusal reason;

  public GatewayRefusedException(GatewayRefusal reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** Which bound was exceeded. */
  public GatewayRefusal reason() {
    return reason;
  }
}
