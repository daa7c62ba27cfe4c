package io.fieldline.perf.mqtt;

import io.gatling.core.protocol.Protocol;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The MQTT protocol settings of a simulation: immutable, built by {@link MqttProtocolBuilder}.
 *
 * @param host broker address (resolved once per simulation)
 * @param ports broker TCP ports, at least one: user {@code i} connects to {@code ports[i mod n]},
 *     so that devices spread evenly over the nodes of a cluster
 * @param keepAlive MQTT keep-alive sent in CONNECT; a PINGREQ goes out after this long without a
 *     write. Zero disables it
 * @param cleanSession the CONNECT CleanSession flag
 * @param connectTimeout longest time from TCP connect to CONNACK before "connect" is KO
 * @param ackTimeout longest time from PUBLISH to PUBACK (or SUBSCRIBE to SUBACK) before the request
 *     is KO
 * @param clientIdPrefix client ids are this prefix plus the Gatling user id
 * @param maxInboundQueue inbound PUBLISHes kept per connection for {@code awaitMessage}; older ones
 *     are dropped beyond it
 * @param stats where every connection and acknowledgement of the run is recorded
 * @param sourceAddresses 0: connect from the address the OS picks; n &gt; 0 (loopback brokers
 *     only): user {@code i} binds its socket to loopback source address {@code i mod n} (see {@link
 *     #sourceAddress}), so that the broker sees a fleet of n addresses instead of one (per-address
 *     limits apply to each as they would to the sites of a real fleet)
 * @param tls null: plain TCP; else every connection is MQTT over TLS with these client settings
 *     ({@link #ports} are then the broker's TLS ports)
 */
public record MqttProtocol(
    String host,
    List<Integer> ports,
    Duration keepAlive,
    boolean cleanSession,
    Duration connectTimeout,
    Duration ackTimeout,
    String clientIdPrefix,
    int maxInboundQueue,
    MqttRunStats stats,
    int sourceAddresses,
    @Nullable MqttTls tls)
    implements Protocol {

  /** Most distinct source addresses: 127.1.0.1 up to 127.1.249.250. */
  public static final int MAX_SOURCE_ADDRESSES = 250 * 250;

  public MqttProtocol {
    Objects.requireNonNull(host, "host");
    ports = List.copyOf(ports);
    if (ports.isEmpty()) {
      throw new IllegalArgumentException("at least one port is needed");
    }
    for (int port : ports) {
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port must be 1..65535: " + port);
      }
    }
    if (keepAlive.isNegative() || keepAlive.toSeconds() > 65535) {
      throw new IllegalArgumentException("keepAlive must be 0..65535 s: " + keepAlive);
    }
    if (connectTimeout.isZero() || connectTimeout.isNegative()) {
      throw new IllegalArgumentException("connectTimeout must be positive: " + connectTimeout);
    }
    if (ackTimeout.isZero() || ackTimeout.isNegative()) {
      throw new IllegalArgumentException("ackTimeout must be positive: " + ackTimeout);
    }
    if (sourceAddresses < 0 || sourceAddresses > MAX_SOURCE_ADDRESSES) {
      throw new IllegalArgumentException(
          "sourceAddresses must be 0.." + MAX_SOURCE_ADDRESSES + ": " + sourceAddresses);
    }
    if (maxInboundQueue < 1) {
      throw new IllegalArgumentException("maxInboundQueue must be positive: " + maxInboundQueue);
    }
  }

  /** Index into {@link #ports()} of the port Gatling user {@code userId} connects to. */
  public int portIndex(long userId) {
    return (int) Math.floorMod(userId, (long) ports.size());
  }

  /**
   * The loopback address Gatling user {@code userId} connects from, or null for the OS's choice:
   * {@code 127.1.x.y} with x = k / 250 and y = k mod 250 + 1, for k = userId mod {@link
   * #sourceAddresses()}. Linux routes all of 127.0.0.0/8 to the loopback interface, so no set-up is
   * needed.
   */
  public @Nullable InetAddress sourceAddress(long userId) {
    if (sourceAddresses == 0) {
      return null;
    }
    int k = (int) Math.floorMod(userId, (long) sourceAddresses);
    byte[] address = {127, 1, (byte) (k / 250), (byte) (k % 250 + 1)};
    try {
      return InetAddress.getByAddress(address);
    } catch (UnknownHostException e) {
      throw new AssertionError("four bytes are always an address", e);
    }
  }

  /** 127.0.0.1:1883, keep-alive 60 s, clean session, 10 s connect and ack timeouts. */
  static MqttProtocol defaults() {
    return new MqttProtocol(
        "127.0.0.1",
        List.of(1883),
        Duration.ofSeconds(60),
        true,
        Duration.ofSeconds(10),
        Duration.ofSeconds(10),
        "gatling-",
        1000,
        new MqttRunStats(),
        0,
        null);
  }
}
