import com.sun.management.OperatingSystemMXBean;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The floor under issue 29's forwarding target: what one message and its answer cost over a bare
 * gRPC bidirectional stream on this machine, with nothing of Fieldline around it. One JVM holds
 * both ends (two Netty event loop groups, as two nodes would have, and each end's callbacks on a
 * fixed pool of max(2, cores) threads, as ClusterNode configures); a paced sender puts RATE
 * messages of REQUEST bytes per second on one stream, each its own onNext (as ForwardStream does),
 * and the receiving end answers each with a 12-byte reply. The process's CPU time over the measured
 * window, less the same window of the pacing loop alone (mode {@code idle}), divided by the
 * messages answered, is the CPU of one message and its reply through gRPC, both ends together.
 *
 * <p>Run (the server module's classpath holds gRPC):
 *
 * <pre>
 * java -Dlogback.configurationFile=bench/grpc/logback-quiet.xml -cp "$(cat server/target/server.classpath)" \
 *     bench/grpc/GrpcFloor.java grpc 1000 30
 * </pre>
 *
 * (and the same with {@code idle}). Arguments: mode ({@code grpc}, {@code direct}: the same with callbacks on the event loops, or
 * {@code idle}), messages per second, measured seconds (after 10
 * seconds of warm-up at the same rate). Connects to 127.0.0.1 only; stops by itself.
 */
public final class GrpcFloor {

  private static final int REQUEST = 160;
  private static final int WARM_UP_SECONDS = 10;

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private static final MethodDescriptor<byte[], byte[]> EXCHANGE =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
          .setFullMethodName("floor.Floor/Exchange")
          .setRequestMarshaller(BYTES)
          .setResponseMarshaller(BYTES)
          .build();

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    int rate = Integer.parseInt(args[1]);
    int seconds = Integer.parseInt(args[2]);
    int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
    // "direct": callbacks run on the Netty event loops instead of a pool (gRPC's directExecutor).
    boolean direct = mode.equals("direct");
    ExecutorService serverPool = Executors.newFixedThreadPool(threads);
    ExecutorService clientPool = Executors.newFixedThreadPool(threads);
    byte[] reply = new byte[12];
    ServerServiceDefinition service =
        ServerServiceDefinition.builder("floor.Floor")
            .addMethod(
                EXCHANGE,
                ServerCalls.asyncBidiStreamingCall(
                    responses ->
                        new StreamObserver<byte[]>() {
                          @Override
                          public void onNext(byte[] request) {
                            responses.onNext(reply);
                          }

                          @Override
                          public void onError(Throwable t) {}

                          @Override
                          public void onCompleted() {
                            responses.onCompleted();
                          }
                        }))
            .build();
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .executor(direct ? Runnable::run : serverPool)
            .addService(service)
            .build()
            .start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
            .usePlaintext()
            .executor(direct ? Runnable::run : clientPool)
            .build();
    AtomicLong answered = new AtomicLong();
    StreamObserver<byte[]> requests =
        ClientCalls.asyncBidiStreamingCall(
            channel.newCall(EXCHANGE, CallOptions.DEFAULT),
            new StreamObserver<byte[]>() {
              @Override
              public void onNext(byte[] value) {
                answered.incrementAndGet();
              }

              @Override
              public void onError(Throwable t) {
                t.printStackTrace();
              }

              @Override
              public void onCompleted() {}
            });
    boolean send = !mode.equals("idle");
    OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long periodNanos = 1_000_000_000L / rate;
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(WARM_UP_SECONDS);
    long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
    long sent = 0;
    long cpuAtStart = -1;
    long answeredAtStart = 0;
    while (true) {
      long now = System.nanoTime();
      if (cpuAtStart < 0 && now >= measureFrom) {
        cpuAtStart = os.getProcessCpuTime();
        answeredAtStart = answered.get();
      }
      if (now >= end) {
        break;
      }
      long due = (now - start) / periodNanos + 1;
      for (; sent < due; sent++) {
        if (send) {
          byte[] message = new byte[REQUEST];
          message[0] = (byte) sent;
          requests.onNext(message);
        }
      }
      LockSupport.parkNanos(start + due * periodNanos - now);
    }
    long cpu = os.getProcessCpuTime() - cpuAtStart;
    long messages = send ? answered.get() - answeredAtStart : (long) rate * seconds;
    System.out.printf(
        "mode %s, %d msgs/s, %d s: %d messages, process CPU %.3f s = %.1f µs per message,"
            + " %.3f cores%n",
        mode,
        rate,
        seconds,
        messages,
        cpu / 1e9,
        cpu / 1e3 / messages,
        cpu / 1e9 / seconds);
    requests.onCompleted();
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    serverPool.shutdownNow();
    clientPool.shutdownNow();
  }
}
