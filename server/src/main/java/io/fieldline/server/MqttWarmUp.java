package io.fieldline.server;

import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.device.Device;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.common.port.SessionTakeover;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.DeviceServices;
import io.fieldline.transport.mqtt.MqttServer;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the MQTT path before the real listeners open, as {@link WarmUp} runs the write path: JFR of
 * cold starts showed the first seconds of load spent compiling Netty's epoll loop, the MQTT decoder
 * and encoder and the session's code while the first devices waited (docs/performance.md, issue
 * 29).
 *
 * <p>A private {@link MqttServer} — this node's MQTT configuration, but one plain listener on a
 * free port of 127.0.0.1 — is put in front of the local device actors, with {@link WarmUpDevices}
 * as its only registry (tokens drawn for this start) and meters of its own, so nothing it does
 * counts in the node's metrics. One client per warm-up device (Netty's MQTT codec) connects,
 * publishes QoS 1 telemetry with a few messages in flight, and disconnects once every message is
 * acknowledged. The messages are {@link WarmUp}'s, to the same reserved device ids: the same cells
 * rewritten with the same values, left out of export. Then the private listener is closed. Best
 * effort: a failure or the timeout is logged and the start goes on.
 */
final class MqttWarmUp {

  private static final Logger LOG = LoggerFactory.getLogger(MqttWarmUp.class);

  private static final int IN_FLIGHT = 8;
  private static final String TELEMETRY = "v1/devices/me/telemetry";

  private MqttWarmUp() {}

  /**
   * Sends about {@code settings.mqttMessages()} messages through a private listener, over {@link
   * WarmUp#DEVICES} connections, and returns once all are acknowledged or the timeout passed.
   *
   * @return the messages acknowledged
   */
  static int run(
      MqttTransportConfig config,
      DeviceInbox localGateway,
      DeadLetterStore deadLetters,
      PayloadParser parser,
      TelemetryQueries queries,
      WarmUp.Settings settings) {
    if (settings.mqttMessages() == 0) {
      return 0;
    }
    long started = System.nanoTime();
    WarmUpDevices devices = new WarmUpDevices(WarmUp.DEVICES, new SecureRandom());
    MqttServer server =
        new MqttServer(
            config.loopbackOnly(),
            devices,
            localGateway,
            deadLetters,
            parser,
            List.of(),
            // The node's kind of registry (the same meter classes get compiled), not the node's.
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            new SessionRegistry(),
            SessionTakeover.LOCAL_ONLY,
            new LocalDeviceEvents(),
            queries,
            DeviceServices.none());
    EventLoopGroup clients = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    AtomicInteger acknowledged = new AtomicInteger();
    try {
      InetSocketAddress address = server.start();
      int perDevice = Math.max(1, settings.mqttMessages() / WarmUp.DEVICES);
      List<CompletableFuture<Void>> done = new ArrayList<>();
      List<Device> warmUpDevices = devices.devices();
      for (int index = 0; index < warmUpDevices.size(); index++) {
        done.add(
            connect(clients, address, warmUpDevices.get(index), index, perDevice, acknowledged));
      }
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0]))
          .get(settings.timeout().toNanos(), TimeUnit.NANOSECONDS);
      LOG.info(
          "warm-up: {} messages through the MQTT listener in {} ms",
          acknowledged.get(),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (TimeoutException | ExecutionException | RuntimeException e) {
      LOG.warn(
          "warm-up through the MQTT listener: {} messages acknowledged, then {}; starting anyway",
          acknowledged.get(),
          e.toString());
    } finally {
      clients.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      server.close();
    }
    return acknowledged.get();
  }

  // One connection: CONNECT, `messages` QoS 1 PUBLISHes with IN_FLIGHT outstanding, DISCONNECT.
  private static CompletableFuture<Void> connect(
      EventLoopGroup group,
      InetSocketAddress address,
      Device device,
      int index,
      int messages,
      AtomicInteger acknowledged) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    new Bootstrap()
        .group(group)
        .channel(NioSocketChannel.class)
        .handler(
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel channel) {
                channel
                    .pipeline()
                    .addLast(new MqttDecoder())
                    .addLast(MqttEncoder.INSTANCE)
                    .addLast(new Publisher(device, index, messages, acknowledged, done));
              }
            })
        .connect(address)
        .addListener(
            connected -> {
              if (!connected.isSuccess()) {
                done.completeExceptionally(connected.cause());
              }
            });
    return done;
  }

  /** The client side of one warm-up connection; confined to its event loop. */
  private static final class Publisher extends SimpleChannelInboundHandler<MqttMessage> {

    private final Device device;
    private final int index;
    private final int messages;
    private final AtomicInteger acknowledged;
    private final CompletableFuture<Void> done;
    private int sent;
    private int acked;

    Publisher(
        Device device,
        int index,
        int messages,
        AtomicInteger acknowledged,
        CompletableFuture<Void> done) {
      this.device = device;
      this.index = index;
      this.messages = messages;
      this.acknowledged = acknowledged;
      this.done = done;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.writeAndFlush(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_3_1_1)
              .clientId(device.name())
              .cleanSession(true)
              .keepAlive(60)
              .hasUser(true)
              .username(device.accessToken())
              .build());
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MqttMessage message) {
      MqttMessageType type = message.fixedHeader().messageType();
      if (type == MqttMessageType.CONNACK) {
        while (sent < Math.min(IN_FLIGHT, messages)) {
          publish(ctx);
        }
        ctx.flush();
      } else if (type == MqttMessageType.PUBACK) {
        acked++;
        acknowledged.incrementAndGet();
        if (sent < messages) {
          publish(ctx);
          ctx.flush();
        } else if (acked == messages) {
          Channel channel = ctx.channel();
          ctx.writeAndFlush(MqttMessageBuilders.disconnect().build())
              .addListener(written -> channel.close());
          done.complete(null);
        }
      }
    }

    // Message i of this device is WarmUp's message index + 16 i, which WarmUp wrote to the same
    // device: the same cells and values, rewritten.
    private void publish(ChannelHandlerContext ctx) {
      int i = sent++;
      ctx.write(
          MqttMessageBuilders.publish()
              .topicName(TELEMETRY)
              .qos(MqttQoS.AT_LEAST_ONCE)
              .messageId(1 + i % 65_535)
              .retained(false)
              .payload(Unpooled.wrappedBuffer(WarmUp.payload(index + WarmUp.DEVICES * i)))
              .build());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (!done.isDone()) {
        done.completeExceptionally(
            new IllegalStateException(
                device.name() + ": closed after " + acked + " of " + messages + " PUBACKs"));
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      done.completeExceptionally(cause);
      ctx.close();
    }
  }
}
