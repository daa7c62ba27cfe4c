package io.fieldline.transport.mqtt.gateway;

import io.fieldline.transport.mqtt.MqttMetrics.GatewayRefusal;
import java.util.Objects;

/**
 * A gateway PUBLISH refused whole because it exceeds a bound of the gateway's session (thrown
 * synchronously) or names a device the gateway may not act for (the failure of the message's stage,
 * once its children are looked up): either way before anything of the message is submitted. The
 * publish path handles it like an invalid payload (dead-lettered and acknowledged, or the
 * connection closed, by the {@code invalid-payload} policy; MQTT 5 acknowledgements carry 0x97
 * quota exceeded, or 0x87 not authorized for {@code not_owner}).
 */
public final class GatewayRefusedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final GatewayRefusal reason;
  private final String message;

  public GatewayRefusedException(GatewayRefusal reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.message = Objects.requireNonNull(message, "message");
  }

  /** Which bound was exceeded. */
  public GatewayRefusal reason() {
    return reason;
  }

  /** What was refused and why, never null: it is logged and kept with the dead letter. */
  @Override
  public String getMessage() {
    return message;
  }
}
