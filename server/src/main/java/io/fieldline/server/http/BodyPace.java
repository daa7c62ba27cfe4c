package io.fieldline.server.http;

import java.time.Duration;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * A request body's bytes, failed with {@link BodyTooSlowException} when they do not arrive fast
 * enough: the whole body within {@code timeout} from the moment a route starts reading it, plus one
 * second for every {@code minBytesPerSecond} bytes received. A large upload at a fair rate keeps
 * going; a body trickled a byte at a time ends soon after {@code timeout}. The failure cancels the
 * body's source, so Pekko closes the connection after the answer. Confined to its stream.
 */
final class BodyPace extends GraphStage<FlowShape<ByteString, ByteString>> {

  private static final String DEADLINE = "deadline";

  private final Inlet<ByteString> in = Inlet.create("BodyPace.in");
  private final Outlet<ByteString> out = Outlet.create("BodyPace.out");
  private final FlowShape<ByteString, ByteString> shape = FlowShape.of(in, out);
  private final long timeoutNanos;
  private final long minBytesPerSecond;
  private final Runnable tooSlow;

  /**
   * @param tooSlow told (on the stream's thread) when the body is failed
   */
  BodyPace(Duration timeout, long minBytesPerSecond, Runnable tooSlow) {
    this.timeoutNanos = timeout.toNanos();
    this.minBytesPerSecond = minBytesPerSecond;
    this.tooSlow = tooSlow;
  }

  @Override
  public FlowShape<ByteString, ByteString> shape() {
    return shape;
  }

  @Override
  public GraphStageLogic createLogic(Attributes inheritedAttributes) {
    return new TimerGraphStageLogic(shape) {
      private final long start = System.nanoTime();
      private long received;

      {
        setHandler(
            in,
            new AbstractInHandler() {
              @Override
              public void onPush() {
                ByteString bytes = grab(in);
                received += bytes.size();
                push(out, bytes);
              }
            });
        setHandler(
            out,
            new AbstractOutHandler() {
              @Override
              public void onPull() {
                pull(in);
              }
            });
      }

      @Override
      public void preStart() {
        scheduleOnce(DEADLINE, Duration.ofNanos(timeoutNanos));
      }

      private long deadline() {
        long earned =
            minBytesPerSecond <= 0
                ? Long.MAX_VALUE / 4
                : Math.min(Long.MAX_VALUE / 4, received * 1_000_000_000L / minBytesPerSecond);
        return start + timeoutNanos + earned;
      }

      @Override
      public void onTimer(Object key) {
        long left = deadline() - System.nanoTime();
        if (left > 0) {
          scheduleOnce(DEADLINE, Duration.ofNanos(left));
          return;
        }
        tooSlow.run();
        failStage(new BodyTooSlowException());
      }
    };
  }
}
