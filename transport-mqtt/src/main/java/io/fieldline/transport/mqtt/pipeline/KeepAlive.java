package io.fieldline.transport.mqtt.pipeline;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.concurrent.TimeUnit;

/**
 * Installs the idle timers of a connection. Stateless; {@link #apply} runs on the channel's event
 * loop (the connect path calls it when it accepts a session).
 */
public final class KeepAlive {

  private KeepAlive() {}

  /**
   * Before CONNECT: a disabled timer, the place {@link #apply} fills in. The connect timeout is a
   * deadline from channel active (the session's), not an idle timer: an idle timer is reset by
   * every byte, so a CONNECT trickled one byte at a time would never time out.
   */
  public static IdleStateHandler beforeConnect() {
    return new IdleStateHandler(0, 0, 0, TimeUnit.MILLISECONDS);
  }

  /**
   * After CONNECT: MQTT 3.1.1 §3.1.2.10 — close when nothing arrives for one and a half times the
   * keep-alive; a keep-alive of 0 turns the timer off.
   */
  public static void apply(ChannelPipeline pipeline, int keepAliveSeconds) {
    if (keepAliveSeconds <= 0) {
      pipeline.remove(PipelineNames.IDLE);
      return;
    }
    long millis = keepAliveSeconds * 1500L;
    pipeline.replace(
        PipelineNames.IDLE,
        PipelineNames.IDLE,
        new IdleStateHandler(millis, 0, 0, TimeUnit.MILLISECONDS));
  }
}
