package io.fieldline.transport.mqtt.pipeline;

import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.flow.FlowControlHandler;
import io.netty.handler.flush.FlushConsolidationHandler;

/**
 * The stages of one MQTT connection, in order: flush consolidation → idle timer → CONNECT property
 * scan (until the first packet) → decode budget → decoder (with the maximum packet size) →
 * pre-CONNACK limit (until the session is accepted) → flow control → encoder → session →
 * last-resort exception handler. The one place the pipeline is assembled, used by the server's
 * channel initializer and by the session tests. Stateless; runs on the channel's event loop.
 */
public final class MqttPipeline {

  // Acks completed by storage callbacks arrive as separate event-loop tasks; consolidating their
  // flushes (also outside reads) turns a burst of PUBACKs into one write syscall.
  private static final int EXPLICIT_FLUSHES_BEFORE_FLUSH = 64;

  private MqttPipeline() {}

  /** Adds every stage to {@code pipeline}; {@code session} is the connection's session handler. */
  public static void addStages(
      ChannelPipeline pipeline, MqttTransportConfig config, ChannelHandler session) {
    pipeline
        .addLast(
            PipelineNames.FLUSH_CONSOLIDATION,
            new FlushConsolidationHandler(EXPLICIT_FLUSHES_BEFORE_FLUSH, true))
        .addLast(PipelineNames.IDLE, KeepAlive.beforeConnect());
    DecodeBudget budget = new DecodeBudget(config.maxPacketSize());
    pipeline
        .addLast(PipelineNames.CONNECT_PROPERTY_SCAN, new ConnectPropertyScan())
        .addLast(PipelineNames.DECODE_BUDGET, budget.bytesIn())
        .addLast(
            PipelineNames.DECODER,
            new MqttDecoder(config.maxPacketSize(), config.maxClientIdLength()))
        .addLast(PipelineNames.DECODED, budget.packetsOut())
        .addLast(
            PipelineNames.PRE_CONNACK_LIMIT, new PreConnackLimit(config.maxQueuedBeforeConnack()))
        // One read can hold thousands of small packets, and the decoder emits them all whatever
        // autoRead says: flow control holds the rest of the read the moment the session stops
        // reading, so every bound that pauses reading applies per packet, not per read.
        .addLast(PipelineNames.FLOW_CONTROL, new FlowControlHandler())
        .addLast(PipelineNames.ENCODER, MqttEncoder.INSTANCE)
        .addLast(PipelineNames.SESSION, session)
        .addLast(PipelineNames.EXCEPTION_LAST, ExceptionLastHandler.INSTANCE);
  }

  /** CONNACK 0x00 is being sent: packets are no longer counted against the pre-CONNACK limit. */
  public static void sessionAccepted(ChannelPipeline pipeline) {
    pipeline.remove(PipelineNames.PRE_CONNACK_LIMIT);
  }
}
