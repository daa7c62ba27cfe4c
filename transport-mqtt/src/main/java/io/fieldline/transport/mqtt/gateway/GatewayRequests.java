package io.fieldline.transport.mqtt.gateway;

import io.fieldline.common.device.Device;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.mqtt.MqttMetrics.AttributeRequestOutcome;
import io.fieldline.transport.mqtt.downlink.AttributeReads;
import io.fieldline.transport.mqtt.downlink.AttributeReads.Values;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.downlink.DownlinkPayloads;
import io.fieldline.transport.mqtt.downlink.DownlinkTopics;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a gateway asks and answers for its children ({@link ChildRequests} parses it):
 *
 * <ul>
 *   <li>{@code v1/gateway/attributes/request}: the child is resolved as by any gateway message
 *       (found, or created, and linked: its place under {@code max-children} is checked first), the
 *       PUBLISH acknowledged once it is, and its attributes are read through the connection's paced
 *       {@link AttributeReads}. The answer goes to {@code v1/gateway/attributes/response} at the
 *       QoS of the gateway's subscription to it (QoS 0 without one), through the session's
 *       downlink: {@code {"id", "device", "value" | "values" | "client"/"shared"}}, or {@code
 *       {"id", "device", "error"}} when the read fails or the answer is larger than the client
 *       takes.
 *   <li>{@code v1/gateway/rpc}: the answer to request {@code id} of the named child (resolved
 *       likewise) goes to that request ({@link io.fieldline.transport.mqtt.downlink.ServerRpcs});
 *       the PUBLISH is acknowledged once the child is resolved, matched or not.
 * </ul>
 *
 * <p>Confined to the channel's event loop; every completion it acts on comes back there.
 */
final class GatewayRequests {

  private static final Logger LOG = LoggerFactory.getLogger(GatewayRequests.class);
  private static final LogThrottle READ_FAILURES = new LogThrottle();

  /** The type of a child first named by a request (ThingsBoard's default). */
  private static final String DEFAULT_TYPE = "default";

  private final SessionContext context;
  private final Connection connection;
  private final SessionState session;
  private final Downlink downlink;
  private final AttributeReads reads;
  private final GatewayChildren children;

  GatewayRequests(
      SessionContext context,
      Connection connection,
      SessionState session,
      Downlink downlink,
      AttributeReads reads,
      GatewayChildren children) {
    this.context = context;
    this.connection = connection;
    this.session = session;
    this.downlink = downlink;
    this.reads = reads;
    this.children = children;
  }

  /**
   * {@code v1/gateway/attributes/request}.
   *
   * @throws io.fieldline.common.kv.PayloadFormatException for an invalid payload
   * @throws GatewayRefusedException when the session holds {@code max-children} children
   */
  CompletionStage<Ack> attributesRequest(byte[] payload) {
    ChildRequests.AttributeRequest request = ChildRequests.attributeRequest(payload);
    children.checkRoom(List.of(request.device()));
    return children
        .child(request.device(), DEFAULT_TYPE)
        .thenApply(
            child -> {
              read(request, child);
              return Ack.stored();
            });
  }

  /**
   * {@code v1/gateway/rpc}.
   *
   * @throws io.fieldline.common.kv.PayloadFormatException for an invalid payload
   * @throws GatewayRefusedException when the session holds {@code max-children} children
   */
  CompletionStage<Ack> rpcAnswer(byte[] payload) {
    ChildRequests.RpcAnswer answer = ChildRequests.rpcAnswer(payload);
    children.checkRoom(List.of(answer.device()));
    return children
        .child(answer.device(), DEFAULT_TYPE)
        .thenApply(
            child -> {
              downlink.rpcs().onChildResponse(answer.id(), child.id(), answer.data());
              return Ack.stored();
            });
  }

  // On the event loop (the child's resolution completes there).
  private void read(ChildRequests.AttributeRequest request, Device child) {
    reads
        .read(child.id(), request.clientKeys(), request.sharedKeys())
        .whenComplete((values, error) -> answer(request, values, error));
  }

  private void answer(
      ChildRequests.AttributeRequest request, @Nullable Values values, @Nullable Throwable error) {
    if (!connection.isConnected()) {
      context.metrics().attributeRequest(AttributeRequestOutcome.DROPPED);
      return;
    }
    String topic = DownlinkTopics.GATEWAY_ATTRIBUTES_RESPONSE;
    AttributeRequestOutcome outcome = AttributeRequestOutcome.ANSWERED;
    byte[] payload;
    if (error != null || values == null) {
      READ_FAILURES.warn(
          LOG,
          "{} attribute request for a child not answered with values: {}",
          connection.logPrefix(),
          String.valueOf(error));
      payload =
          DownlinkPayloads.childError(
              request.id(), request.device(), "attributes could not be read, try again later");
      outcome = AttributeRequestOutcome.FAILED;
    } else {
      payload =
          DownlinkPayloads.childAttributes(
              request.id(), request.device(), request.shape(), values.client(), values.shared());
    }
    int qos = Math.max(0, DownlinkTopics.qos(session, topic));
    if (!downlink.fits(topic, payload.length, qos)) {
      // MQTT 5 §3.1.2.11.4: not sent as it is; the gateway learns why instead of waiting.
      payload =
          DownlinkPayloads.childError(
              request.id(),
              request.device(),
              "the answer of "
                  + payload.length
                  + " bytes exceeds the client's maximum packet size");
      outcome = AttributeRequestOutcome.FAILED;
    }
    context
        .metrics()
        .attributeRequest(
            downlink.answer(topic, payload, qos) ? outcome : AttributeRequestOutcome.DROPPED);
  }
}
