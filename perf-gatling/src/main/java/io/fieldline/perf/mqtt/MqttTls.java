package io.fieldline.perf.mqtt;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLException;

/**
 * The client side of MQTT over TLS: one {@link SslContext} per simulation that trusts the CA
 * certificates of a PEM file, offers TLS 1.3 and 1.2, and checks that the broker's certificate
 * names the host connected to (the HTTPS rules: for {@code 127.0.0.1} an IP address in the subject
 * alternative names), as a device that verifies its broker does.
 *
 * <p>Sessions: a client engine caches the sessions it made under its peer's host and port and
 * offers the cached one (TLS 1.3 PSK, TLS 1.2 ticket or id) the next time it meets that pair. That
 * port is nothing but the cache key here (the socket is connected by the bootstrap), so each device
 * passes its own number as the port: devices never resume each other's sessions, every first
 * connection of a device is a full handshake, and a device that reconnects (ConnectionStorm {@code
 * storm=reconnect}) resumes its own session, as a device that keeps its session ticket would.
 *
 * <p>Immutable and shared by every event loop.
 */
public final class MqttTls {

  /** The protocols offered, those of Fieldline's listener. */
  static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

  private final SslContext context;
  private final SslProvider provider;

  private MqttTls(SslContext context, SslProvider provider) {
    this.context = context;
    this.provider = provider;
  }

  /**
   * A client that trusts the CA certificates of {@code caPem}.
   *
   * @param provider {@link SslProvider#JDK} (the JDK's TLS, no native code) or {@link
   *     SslProvider#OPENSSL} (BoringSSL through netty-tcnative, which must then be on the
   *     classpath)
   * @throws IllegalArgumentException if the file holds no usable certificate or OpenSSL is asked
   *     for and cannot be loaded
   */
  public static MqttTls trusting(Path caPem, SslProvider provider) {
    if (!Files.isRegularFile(caPem)) {
      throw new IllegalArgumentException("no CA certificate file " + caPem.toAbsolutePath());
    }
    if (provider != SslProvider.JDK && !OpenSsl.isAvailable()) {
      throw new IllegalArgumentException(
          "TLS provider " + provider + " is not available: " + OpenSsl.unavailabilityCause());
    }
    try {
      SslContext context =
          SslContextBuilder.forClient()
              .sslProvider(provider)
              .trustManager(caPem.toFile())
              .protocols(PROTOCOLS)
              .endpointIdentificationAlgorithm("HTTPS")
              .build();
      return new MqttTls(context, provider);
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("cannot trust " + caPem + ": " + e.getMessage(), e);
    }
  }

  /** The provider of the client's engines. */
  public SslProvider provider() {
    return provider;
  }

  /**
   * A handler for one connection of device {@code device} to {@code host}; the handshake starts
   * when the channel becomes active and fails after {@code handshakeTimeout}.
   */
  SslHandler newHandler(
      ByteBufAllocator allocator, String host, long device, Duration handshakeTimeout) {
    SslHandler handler = context.newHandler(allocator, host, sessionKey(device));
    handler.setHandshakeTimeoutMillis(Math.max(1, handshakeTimeout.toMillis()));
    return handler;
  }

  /** The per-device "port" of the session cache, 1..65535 (see the class comment). */
  static int sessionKey(long device) {
    return 1 + (int) Math.floorMod(device, 65_535L);
  }
}
