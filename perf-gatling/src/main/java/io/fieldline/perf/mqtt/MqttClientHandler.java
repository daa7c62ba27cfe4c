package io.fieldline.perf.mqtt;

import io.fieldline.perf.mqtt.MqttRunStats.Failure;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;

/**
 * The last stage of a client pipeline: turns the broker's packets into calls on the {@link
 * MqttConnection}, answers inbound QoS 1/2 PUBLISHes, sends PINGREQ when nothing was written for a
 * keep-alive period, and reports the channel's close. Runs on the user's event loop.
 */
final class MqttClientHandler extends SimpleChannelInboundHandler<MqttMessage> {

  private static final MqttMessage PINGREQ =
      new MqttMessage(
          new MqttFixedHeader(MqttMessageType.PINGREQ, false, MqttQoS.AT_MOST_ONCE, false, 0));

  private final MqttConnection connection;

  MqttClientHandler(MqttConnection connection) {
    this.connection = connection;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, MqttMessage msg) {
    if (msg.decoderResult().isFailure()) {
      connection.closed(Failure.CLOSED, "undecodable packet: " + msg.decoderResult().cause());
      ctx.close();
      return;
    }
    MqttMessageType type = msg.fixedHeader().messageType();
    switch (type) {
      case CONNACK -> connection.onConnAck((MqttConnAckMessage) msg);
      case PUBACK, SUBACK, UNSUBACK, PUBCOMP -> connection.onAck(msg, packetId(msg));
      case PUBREC -> {
        // MQTT 3.1.1 §4.3.3: answer PUBREC with PUBREL; the request completes on PUBCOMP.
        ctx.writeAndFlush(MqttConnection.ackOf(MqttMessageType.PUBREL, packetId(msg)));
      }
      case PUBLISH -> inbound(ctx, (MqttPublishMessage) msg);
      case PUBREL ->
          ctx.writeAndFlush(MqttConnection.ackOf(MqttMessageType.PUBCOMP, packetId(msg)));
      case PINGRESP -> {
        // keep-alive answered; nothing to do
      }
      default -> {
        connection.closed(Failure.CLOSED, "unexpected packet from the broker: " + type);
        ctx.close();
      }
    }
  }

  private void inbound(ChannelHandlerContext ctx, MqttPublishMessage publish) {
    byte[] payload = ByteBufUtil.getBytes(publish.content());
    int packetId = publish.variableHeader().packetId();
    // MQTT 3.1.1 §4.3.2 / §4.3.3: QoS 1 is answered with PUBACK, QoS 2 with PUBREC.
    switch (publish.fixedHeader().qosLevel()) {
      case AT_LEAST_ONCE ->
          ctx.writeAndFlush(MqttConnection.ackOf(MqttMessageType.PUBACK, packetId));
      case EXACTLY_ONCE ->
          ctx.writeAndFlush(MqttConnection.ackOf(MqttMessageType.PUBREC, packetId));
      default -> {
        // QoS 0: nothing to answer
      }
    }
    connection.onInbound(publish.variableHeader().topicName(), payload);
  }

  private static int packetId(MqttMessage msg) {
    // MqttMessageIdAndPropertiesVariableHeader (SUBACK) is a subclass.
    Object header = msg.variableHeader();
    if (header instanceof MqttMessageIdVariableHeader id) {
      return id.messageId();
    }
    return -1;
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.WRITER_IDLE) {
      ctx.writeAndFlush(PINGREQ);
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    connection.closed(Failure.CLOSED, "connection closed");
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    connection.closed(Failure.CLOSED, "connection error: " + cause);
    ctx.close();
  }
}
