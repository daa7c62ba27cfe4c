package io.fieldline.perf.tls;

import io.fieldline.perf.CommandLine;
import io.netty.buffer.ByteBuf;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.Version;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which {@code SslHandler} engine should serve Fieldline's MQTT-over-TLS listener: the JDK's (what
 * ships, {@code TlsContext}) or OpenSSL's (BoringSSL through netty-tcnative-boringssl-static)?
 * Measured in one thread without sockets ({@link TlsPair}), on the server's side only, with the
 * settings of {@code TlsContext}: TLS 1.3 and 1.2, its cipher suites, a client certificate asked
 * for and optional. Per provider:
 *
 * <ul>
 *   <li>full handshakes (the client never resumes): server CPU per handshake, the engine's creation
 *       included, and the bytes it sends;
 *   <li>the records of a QoS 1 telemetry flow on an open connection: server CPU to read one
 *       ~130-byte PUBLISH record (one socket read each) and to write one 4-byte PUBACK record.
 * </ul>
 *
 * <p>The providers take turns, round after round, after a warm-up of each; every figure is the
 * median of the rounds (with their range). The client side is the JDK's unless {@code --client
 * openssl}; its CPU is shown but is not what is compared. Prints a Markdown section (and writes it
 * to {@code --out}).
 *
 * <pre>
 * java -cp ... io.fieldline.perf.tls.TlsProviderBench --cert-dir bench/results/x/tls-ec \
 *   [--key-name "EC P-256"] [--protocol TLSv1.3] [--seconds 5] [--warmup 10] [--rounds 3] \
 *   [--client jdk] [--machine "..."] [--command "..."] [--out providers.md]
 * </pre>
 */
public final class TlsProviderBench {

  /** {@code TlsContext.CIPHERS}: TLS 1.3's suites and forward-secret AEAD ones for TLS 1.2. */
  static final List<String> CIPHERS =
      List.of(
          "TLS_AES_128_GCM_SHA256",
          "TLS_AES_256_GCM_SHA384",
          "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

  /** A QoS 1 PUBLISH to v1/devices/me/telemetry with a ~100-byte ThingsBoard payload. */
  static final byte[] PUBLISH = publish();

  /** PUBACK of packet id 1. */
  static final byte[] PUBACK = {0x40, 0x02, 0x00, 0x01};

  private static final int BATCH = 1_000;
  private static final SslProvider[] PROVIDERS = {SslProvider.JDK, SslProvider.OPENSSL};

  /** One provider over one round. */
  record Round(
      long handshakes,
      double handshakeMicros,
      double clientHandshakeMicros,
      double handshakeBytes,
      long records,
      double readMicros,
      double writeMicros,
      String session) {}

  private TlsProviderBench() {}

  public static void main(String[] args) throws IOException {
    CommandLine line = CommandLine.parse(args);
    Path dir = Path.of(line.get("cert-dir"));
    String protocol = line.get("protocol", "TLSv1.3");
    double seconds = line.getDouble("seconds", 5);
    double warmup = line.getDouble("warmup", 10);
    int rounds = line.getInt("rounds", 3);
    if (rounds < 1) {
      throw new IllegalArgumentException("--rounds must be at least 1");
    }
    SslProvider clientProvider =
        "openssl".equals(line.get("client", "jdk")) ? SslProvider.OPENSSL : SslProvider.JDK;
    if (!OpenSsl.isAvailable()) {
      throw new IllegalStateException(
          "OpenSSL (netty-tcnative) cannot be loaded here: " + OpenSsl.unavailabilityCause());
    }
    SslContext client = client(dir.resolve("ca.pem"), clientProvider, protocol);
    Map<SslProvider, SslContext> servers = new EnumMap<>(SslProvider.class);
    for (SslProvider provider : PROVIDERS) {
      servers.put(provider, server(dir.resolve("server.pem"), dir.resolve("server.key"), provider));
    }

    for (SslProvider provider : PROVIDERS) {
      System.err.printf("warm-up %s: %.0f s%n", provider, warmup);
      // the EnumMap holds a context for every provider of PROVIDERS, put just above
      measure(Objects.requireNonNull(servers.get(provider)), client, warmup / 2);
    }
    Map<SslProvider, List<Round>> results = new EnumMap<>(SslProvider.class);
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < PROVIDERS.length; i++) {
        // Alternate which provider goes first, so neither always follows the other's garbage.
        SslProvider provider = PROVIDERS[(i + r) % PROVIDERS.length];
        Round round = measure(Objects.requireNonNull(servers.get(provider)), client, seconds);
        results.computeIfAbsent(provider, p -> new ArrayList<>()).add(round);
        System.err.printf(
            "round %d %s: %d handshakes, %.0f µs each; %d records, read %.2f µs, write %.2f µs%n",
            r + 1,
            provider,
            round.handshakes(),
            round.handshakeMicros(),
            round.records(),
            round.readMicros(),
            round.writeMicros());
      }
    }
    String markdown =
        render(
            results,
            line.get("key-name", dir.getFileName().toString()),
            protocol,
            clientProvider,
            seconds,
            warmup,
            line.get("machine", "?"),
            line.get("command", "?"));
    System.out.println(markdown);
    String out = line.optional("out");
    if (out != null) {
      Files.writeString(Path.of(out), markdown, StandardCharsets.UTF_8);
    }
  }

  /** The server context as {@code TlsContext} builds it, on {@code provider}. */
  static SslContext server(Path cert, Path key, SslProvider provider) throws IOException {
    return SslContextBuilder.forServer(cert.toFile(), key.toFile())
        .sslProvider(provider)
        .protocols("TLSv1.3", "TLSv1.2")
        .ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
        .clientAuth(ClientAuth.OPTIONAL)
        .trustManager(InsecureTrustManagerFactory.INSTANCE)
        .build();
  }

  /** A client offering only {@code protocol}; without a peer address it checks no host name. */
  static SslContext client(Path ca, SslProvider provider, String protocol) throws IOException {
    return SslContextBuilder.forClient()
        .sslProvider(provider)
        .trustManager(ca.toFile())
        .protocols(protocol)
        .endpointIdentificationAlgorithm(null)
        .build();
  }

  /** Half of {@code seconds} of full handshakes, then half of records on one connection. */
  static Round measure(SslContext server, SslContext client, double seconds) {
    long handshakes = 0;
    long serverNanos = 0;
    long clientNanos = 0;
    long bytes = 0;
    String session = "";
    long deadline = System.nanoTime() + (long) (seconds / 2 * 1e9);
    while (System.nanoTime() < deadline) {
      try (TlsPair pair = new TlsPair(server, client)) {
        pair.pump();
        if (!pair.handshaken()) {
          throw new IllegalStateException("handshake did not complete");
        }
        session = pair.session();
        handshakes++;
        serverNanos += pair.serverNanos();
        clientNanos += pair.clientNanos();
        bytes += pair.serverBytes();
      }
    }
    long records = 0;
    long readNanos = 0;
    long writeNanos = 0;
    try (TlsPair pair = new TlsPair(server, client)) {
      pair.pump();
      deadline = System.nanoTime() + (long) (seconds / 2 * 1e9);
      while (System.nanoTime() < deadline) {
        Queue<ByteBuf> batch = pair.clientRecords(PUBLISH, BATCH);
        long before = pair.serverNanos();
        pair.serverReads(batch);
        long read = pair.serverNanos();
        pair.serverWrites(PUBACK, BATCH);
        readNanos += read - before;
        writeNanos += pair.serverNanos() - read;
        records += BATCH;
      }
      if (pair.serverReads() != records) {
        throw new IllegalStateException(
            "the server decrypted " + pair.serverReads() + " of " + records + " records");
      }
    }
    return new Round(
        handshakes,
        serverNanos / 1e3 / handshakes,
        clientNanos / 1e3 / handshakes,
        (double) bytes / handshakes,
        records,
        readNanos / 1e3 / records,
        writeNanos / 1e3 / records,
        session);
  }

  private static byte[] publish() {
    byte[] topic = "v1/devices/me/telemetry".getBytes(StandardCharsets.UTF_8);
    byte[] payload =
        ("{\"ts\":1764000000000,\"values\":{\"temperature\":21.53,\"humidity\":48.2,"
                + "\"pressure\":1013.25,\"battery\":97}}")
            .getBytes(StandardCharsets.UTF_8);
    int remaining = 2 + topic.length + 2 + payload.length;
    byte[] packet = new byte[2 + remaining];
    packet[0] = 0x32; // MQTT 3.1.1 §3.3.1: PUBLISH, QoS 1
    packet[1] = (byte) remaining; // below 128: a one-byte remaining length
    packet[3] = (byte) topic.length;
    System.arraycopy(topic, 0, packet, 4, topic.length);
    packet[4 + topic.length + 1] = 1; // packet id 1
    System.arraycopy(payload, 0, packet, 6 + topic.length, payload.length);
    return packet;
  }

  static String render(
      Map<SslProvider, List<Round>> results,
      String keyName,
      String protocol,
      SslProvider clientProvider,
      double seconds,
      double warmup,
      String machine,
      String command) {
    // main measures both providers at least once (--rounds is at least 1)
    List<Round> jdk = Objects.requireNonNull(results.get(SslProvider.JDK), "no JDK rounds");
    List<Round> openssl =
        Objects.requireNonNull(results.get(SslProvider.OPENSSL), "no OpenSSL rounds");
    StringBuilder md = new StringBuilder();
    md.append("### TLS providers for the MQTT listener: JDK vs OpenSSL, ")
        .append(keyName)
        .append(" certificate, ")
        .append(protocol)
        .append("\n\n");
    md.append("- Command: `").append(command).append("`\n");
    md.append("- Machine: ").append(machine).append("\n");
    md.append("- Versions: Netty ")
        .append(version("netty-handler"))
        .append(", netty-tcnative-boringssl-static ")
        .append(tcnativeVersion())
        .append(" (")
        .append(OpenSsl.versionString())
        .append("), ")
        .append(System.getProperty("java.vm.name"))
        .append(' ')
        .append(System.getProperty("java.version"))
        .append("\n");
    md.append(
            "- Server side as `TlsContext` builds it (TLS 1.3 and 1.2, its suites, client"
                + " certificate asked for, optional); client: ")
        .append(clientProvider == SslProvider.JDK ? "JDK" : "OpenSSL")
        .append(" engine offering ")
        .append(protocol)
        .append(" only, no certificate, never resuming; one thread, no sockets")
        .append("\n");
    md.append("- Negotiated: JDK ")
        .append(jdk.get(0).session())
        .append("; OpenSSL ")
        .append(openssl.get(0).session())
        .append("\n");
    md.append("- ")
        .append(jdk.size())
        .append(" rounds of ")
        .append(fmt(seconds, 0))
        .append(" s per provider, taking turns, after ")
        .append(fmt(warmup / 2, 0))
        .append(" s of warm-up each; medians, range in brackets; handshakes per round: JDK ")
        .append(fmt(median(jdk, r -> r.handshakes()), 0))
        .append(", OpenSSL ")
        .append(fmt(median(openssl, r -> r.handshakes()), 0))
        .append("\n\n");
    md.append("| server side, CPU of one thread | JDK (ships) | OpenSSL | JDK ÷ OpenSSL |\n");
    md.append("| --- | ---: | ---: | ---: |\n");
    row(
        md,
        "full handshake, µs (engine created, ClientHello → session ticket)",
        jdk,
        openssl,
        0,
        Round::handshakeMicros);
    md.append("| full handshakes per second per core | ")
        .append(fmt(1e6 / median(jdk, Round::handshakeMicros), 0))
        .append(" | ")
        .append(fmt(1e6 / median(openssl, Round::handshakeMicros), 0))
        .append(" | |\n");
    row(
        md,
        "read one " + PUBLISH.length + "-byte PUBLISH record, µs",
        jdk,
        openssl,
        2,
        Round::readMicros);
    row(md, "write one 4-byte PUBACK record, µs", jdk, openssl, 2, Round::writeMicros);
    row(
        md,
        "TLS per QoS 1 message (read + write), µs",
        jdk,
        openssl,
        2,
        r -> r.readMicros() + r.writeMicros());
    row(md, "bytes the server sends per handshake", jdk, openssl, 0, Round::handshakeBytes);
    row(
        md,
        "client CPU per handshake, µs (not compared: the client is the same)",
        jdk,
        openssl,
        0,
        Round::clientHandshakeMicros);
    return md.toString();
  }

  private static void row(
      StringBuilder md,
      String name,
      List<Round> jdk,
      List<Round> openssl,
      int decimals,
      ToDoubleFunction<Round> metric) {
    double a = median(jdk, metric);
    double b = median(openssl, metric);
    md.append("| ")
        .append(name)
        .append(" | ")
        .append(withRange(jdk, metric, decimals))
        .append(" | ")
        .append(withRange(openssl, metric, decimals))
        .append(" | ")
        .append(b > 0 ? fmt(a / b, 2) : "-")
        .append(" |\n");
  }

  private static String withRange(
      List<Round> rounds, ToDoubleFunction<Round> metric, int decimals) {
    String median = fmt(median(rounds, metric), decimals);
    if (rounds.size() < 2) {
      return median;
    }
    double min = rounds.stream().mapToDouble(metric).min().orElse(Double.NaN);
    double max = rounds.stream().mapToDouble(metric).max().orElse(Double.NaN);
    return median + " (" + fmt(min, decimals) + "–" + fmt(max, decimals) + ")";
  }

  static double median(List<Round> rounds, ToDoubleFunction<Round> metric) {
    double[] values = rounds.stream().mapToDouble(metric).sorted().toArray();
    int n = values.length;
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  private static String version(String artifact) {
    Version version = Version.identify().get(artifact);
    return version == null ? "?" : version.artifactVersion();
  }

  // netty-tcnative's jars carry no Netty version file: the version is the one in the jar's name.
  private static String tcnativeVersion() {
    Matcher jar =
        Pattern.compile("netty-tcnative-classes-([^" + File.pathSeparator + "/]+)\\.jar")
            .matcher(System.getProperty("java.class.path", ""));
    return jar.find() ? jar.group(1) : "?";
  }

  private static String fmt(double value, int decimals) {
    return String.format(Locale.ROOT, "%,." + decimals + "f", value);
  }
}
