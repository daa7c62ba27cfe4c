package io.fieldline.perf.hivemq;

import com.hivemq.embedded.EmbeddedExtension;
import com.hivemq.embedded.EmbeddedHiveMQ;
import com.hivemq.extension.sdk.api.ExtensionMain;
import com.hivemq.extension.sdk.api.auth.SimpleAuthenticator;
import com.hivemq.extension.sdk.api.parameter.ExtensionStartInput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStartOutput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStopInput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStopOutput;
import com.hivemq.extension.sdk.api.services.Services;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * HiveMQ Community Edition, embedded, for bench/run.sh's {@code hivemq} phase: one TCP listener on
 * the given address and port (a TLS one when a PKCS#12 keystore is given: bench/run.sh with {@code
 * TLS=1}; HiveMQ CE serves TLS with the JDK provider), in-memory persistence, no usage statistics,
 * and an embedded extension that authenticates every client (HiveMQ CE refuses every CONNECT while
 * no authenticator is installed). Prints {@code hivemq ready <host>:<port>} once the listener is up
 * and runs until the JVM is stopped (SIGTERM stops the broker first).
 *
 * <pre>
 * java -cp ... io.fieldline.perf.hivemq.HiveMqBroker 127.0.0.1 18831 /tmp/hivemq-home [server.p12 password]
 * </pre>
 */
public final class HiveMqBroker {

  private HiveMqBroker() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3 && args.length != 5) {
      System.err.println(
          "usage: HiveMqBroker <bind-address> <port> <home-folder> [<keystore.p12> <password>]");
      System.exit(2);
    }
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    Path home = Path.of(args[2]).toAbsolutePath();
    Path config = Files.createDirectories(home.resolve("conf"));
    Path data = Files.createDirectories(home.resolve("data"));
    Path extensions = Files.createDirectories(home.resolve("extensions"));
    String listener =
        args.length == 5
            ? tlsListener(host, port, Path.of(args[3]).toAbsolutePath(), args[4])
            : tcpListener(host, port);
    Files.writeString(config.resolve("config.xml"), configXml(listener), StandardCharsets.UTF_8);
    Files.writeString(config.resolve("logback.xml"), LOGBACK, StandardCharsets.UTF_8);

    EmbeddedHiveMQ broker =
        EmbeddedHiveMQ.builder()
            .withConfigurationFolder(config)
            .withDataFolder(data)
            .withExtensionsFolder(extensions)
            .withEmbeddedExtension(
                EmbeddedExtension.builder()
                    .withId("fieldline-bench-allow-all")
                    .withName("Fieldline bench: accept every client")
                    .withVersion("1")
                    .withAuthor("Fieldline")
                    .withPriority(0)
                    .withStartPriority(1000)
                    .withExtensionMain(new AllowAll())
                    .build())
            .build();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    broker.stop().join();
                  } finally {
                    stopped.countDown();
                  }
                },
                "hivemq-stop"));
    broker.start().join();
    System.out.println("hivemq ready " + host + ":" + port);
    System.out.flush();
    stopped.await();
  }

  static String tcpListener(String host, int port) {
    return """
        <tcp-listener>
          <port>%d</port>
          <bind-address>%s</bind-address>
        </tcp-listener>
    """
        .formatted(port, host);
  }

  // The keystore holds the server certificate and its key under one password (bench/tls-cert.sh);
  // the JDK reads a PKCS#12 file as HiveMQ's default keystore type (JKS) too.
  static String tlsListener(String host, int port, Path keystore, String password) {
    return """
        <tls-tcp-listener>
          <port>%d</port>
          <bind-address>%s</bind-address>
          <tls>
            <keystore>
              <path>%s</path>
              <password>%s</password>
              <private-key-password>%s</private-key-password>
            </keystore>
            <client-authentication-mode>NONE</client-authentication-mode>
          </tls>
        </tls-tcp-listener>
    """
        .formatted(port, host, keystore, password, password);
  }

  static String configXml(String listener) {
    return """
    <?xml version="1.0"?>
    <hivemq>
      <listeners>
    %s  </listeners>
      <persistence>
        <mode>in-memory</mode>
      </persistence>
      <anonymous-usage-statistics>
        <enabled>false</enabled>
      </anonymous-usage-statistics>
    </hivemq>
    """
        .formatted(listener);
  }

  private static final String LOGBACK =
      """
      <configuration>
        <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
          <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
        </appender>
        <root level="INFO"><appender-ref ref="CONSOLE"/></root>
      </configuration>
      """;

  /** Installs an authenticator that accepts every CONNECT (default permissions: everything). */
  private static final class AllowAll implements ExtensionMain {

    @Override
    public void extensionStart(ExtensionStartInput input, ExtensionStartOutput output) {
      SimpleAuthenticator acceptAll = (auth, result) -> result.authenticateSuccessfully();
      Services.securityRegistry().setAuthenticatorProvider(provider -> acceptAll);
    }

    @Override
    public void extensionStop(ExtensionStopInput input, ExtensionStopOutput output) {}
  }
}
