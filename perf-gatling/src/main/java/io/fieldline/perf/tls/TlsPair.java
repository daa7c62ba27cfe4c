package io.fieldline.perf.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayDeque;
import java.util.Queue;
import javax.net.ssl.SSLSession;

/**
 * One TLS connection without a socket: a client and a server {@link SslHandler}, each in an {@link
 * EmbeddedChannel}, with the bytes carried across by {@link #pump()}. Everything the server side
 * does (its engine's creation, every read of the client's bytes and every write of its own) runs
 * between two readings of this thread's CPU clock and is added to {@link #serverNanos()}; the
 * client's work goes to {@link #clientNanos()}. Plaintext that reaches either end is released (the
 * server counts it in {@link #serverReads()}).
 *
 * <p>Inbound bytes reach the server in pooled direct buffers, as a socket's reads do. Delegated
 * tasks of the engines run inline (Netty's default), so they are counted too. Single-threaded.
 */
final class TlsPair implements AutoCloseable {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final EmbeddedChannel server;
  private final EmbeddedChannel client;
  private final SslHandler serverHandler;
  private final SslHandler clientHandler;
  private long serverNanos;
  private long clientNanos;
  private long serverBytes;
  private long serverReads;

  /** Opens the pair; the client's ClientHello is waiting to be pumped. */
  TlsPair(SslContext serverContext, SslContext clientContext) {
    long start = cpu();
    serverHandler = serverContext.newHandler(ByteBufAllocator.DEFAULT);
    server = new EmbeddedChannel(serverHandler, new Sink(true));
    long afterServer = cpu();
    // No peer host and port: the client never finds a session to resume, every handshake is full.
    clientHandler = clientContext.newHandler(ByteBufAllocator.DEFAULT);
    client = new EmbeddedChannel(clientHandler, new Sink(false));
    serverNanos += afterServer - start;
    clientNanos += cpu() - afterServer;
  }

  /** CPU time of the calling thread, ns. */
  static long cpu() {
    return THREADS.getCurrentThreadCpuTime();
  }

  /** Carries bytes both ways until neither side has anything to send. */
  void pump() {
    boolean moved = true;
    while (moved) {
      moved = false;
      for (ByteBuf out; (out = client.readOutbound()) != null; moved = true) {
        toServer(out);
      }
      for (ByteBuf out; (out = server.readOutbound()) != null; moved = true) {
        serverBytes += out.readableBytes();
        long start = cpu();
        client.writeInbound(out);
        clientNanos += cpu() - start;
      }
    }
  }

  /** Whether both ends finished the handshake. */
  boolean handshaken() {
    return serverHandler.handshakeFuture().isSuccess()
        && clientHandler.handshakeFuture().isSuccess();
  }

  /** What was negotiated, "TLSv1.3 TLS_AES_128_GCM_SHA256". */
  String session() {
    SSLSession session = serverHandler.engine().getSession();
    return session.getProtocol() + " " + session.getCipherSuite();
  }

  /**
   * The client encrypts each message as one record (untimed for the server) and returns the
   * records, each copied into a pooled direct buffer; feed them with {@link #serverReads(Queue)}.
   */
  Queue<ByteBuf> clientRecords(byte[] message, int count) {
    long start = cpu();
    Queue<ByteBuf> records = new ArrayDeque<>(count);
    for (int i = 0; i < count; i++) {
      client.writeOutbound(client.alloc().directBuffer(message.length).writeBytes(message));
      for (ByteBuf out; (out = client.readOutbound()) != null; ) {
        records.add(direct(out));
      }
    }
    clientNanos += cpu() - start;
    return records;
  }

  /**
   * The server reads {@code records} one read each, as one socket read per record; timed as a whole
   * (reading the clock per record would cost about as much as a small record).
   */
  void serverReads(Queue<ByteBuf> records) {
    long start = cpu();
    for (ByteBuf record; (record = records.poll()) != null; ) {
      server.writeInbound(record);
    }
    serverNanos += cpu() - start;
  }

  /**
   * The server writes and flushes {@code count} messages, one record each, timed as a whole; the
   * records are then dropped untimed (the client does not read them).
   */
  void serverWrites(byte[] message, int count) {
    Queue<ByteBuf> plain = new ArrayDeque<>(count);
    for (int i = 0; i < count; i++) {
      plain.add(server.alloc().directBuffer(message.length).writeBytes(message));
    }
    long start = cpu();
    for (ByteBuf next; (next = plain.poll()) != null; ) {
      server.writeOneOutbound(next);
      server.flushOutbound();
    }
    serverNanos += cpu() - start;
    for (Object out; (out = server.readOutbound()) != null; ) {
      ReferenceCountUtil.release(out);
    }
  }

  long serverNanos() {
    return serverNanos;
  }

  long clientNanos() {
    return clientNanos;
  }

  /** Bytes the server sent the client through {@link #pump()}. */
  long serverBytes() {
    return serverBytes;
  }

  /** Plaintext messages the server received. */
  long serverReads() {
    return serverReads;
  }

  @Override
  public void close() {
    client.finishAndReleaseAll();
    server.finishAndReleaseAll();
  }

  private void toServer(ByteBuf bytes) {
    ByteBuf in = direct(bytes);
    long start = cpu();
    server.writeInbound(in);
    serverNanos += cpu() - start;
  }

  private static ByteBuf direct(ByteBuf bytes) {
    if (bytes.isDirect()) {
      return bytes;
    }
    ByteBuf copy = ByteBufAllocator.DEFAULT.directBuffer(bytes.readableBytes()).writeBytes(bytes);
    bytes.release();
    return copy;
  }

  /** The end of each pipeline: counts and releases plaintext. */
  private final class Sink extends ChannelInboundHandlerAdapter {
    private final boolean serverSide;

    Sink(boolean serverSide) {
      this.serverSide = serverSide;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (serverSide) {
        serverReads++;
      }
      ReferenceCountUtil.release(msg);
    }
  }
}
