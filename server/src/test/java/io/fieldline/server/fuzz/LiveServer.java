package io.fieldline.server.fuzz;

import com.datastax.oss.driver.api.core.CqlSession;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.device.Device;
import io.fieldline.server.FieldlineServer;
import io.fieldline.server.ItDriver;
import io.fieldline.server.ItKeyspace;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import javax.net.ssl.SSLContext;

/**
 * A real Fieldline server for the fuzz campaign, on free ports of 127.0.0.1, against the module's
 * shared Cassandra child JVM (the shared test keyspace, emptied), with both MQTT listeners: plain,
 * and TLS with a certificate from a CA made for the run (Netty's pkitesting, as in MqttTlsIT). The
 * same start as the package-private ServerTestBase, which this package cannot extend.
 */
final class LiveServer implements AutoCloseable {

  private final FieldlineServer server;
  private final CqlSession cql;
  private final SSLContext clientTls;

  private LiveServer(FieldlineServer server, CqlSession cql, SSLContext clientTls) {
    this.server = server;
    this.cql = cql;
    this.clientTls = clientTls;
  }

  /** Starts a server; {@code overrides} are HOCON paths and values on top of the test defaults. */
  static LiveServer start(Map<String, Object> overrides) throws Exception {
    EmbeddedCassandra cassandra = SharedCassandra.get();
    String keyspace = ItKeyspace.fresh(cassandra);
    Path dir = Files.createTempDirectory("fieldline-fuzz-");
    X509Bundle ca =
        new CertificateBuilder()
            .subject("CN=Fieldline fuzz CA")
            .setIsCertificateAuthority(true)
            .ecp256()
            .buildSelfSigned();
    X509Bundle leaf =
        new CertificateBuilder()
            .subject("CN=localhost")
            .addSanIpAddress("127.0.0.1")
            .setKeyUsage(true, CertificateBuilder.KeyUsage.digitalSignature)
            .addExtendedKeyUsageServerAuth()
            .ecp256()
            .buildIssuedBy(ca);
    Path cert = Files.writeString(dir.resolve("server-chain.pem"), leaf.getCertificatePathPEM());
    Path key = Files.writeString(dir.resolve("server-key.pem"), leaf.getPrivateKeyPEM());

    String contact =
        cassandra.cqlAddress().getHostString() + ":" + cassandra.cqlAddress().getPort();
    Config config =
        ConfigFactory.parseMap(overrides)
            .withFallback(
                ConfigFactory.parseString(
                    String.join(
                        "\n",
                        "fieldline.data-dir = \"" + dir + "\"",
                        "fieldline.mqtt.port = 0",
                        "fieldline.mqtt.host = \"127.0.0.1\"",
                        "fieldline.mqtt.tls.port = 0",
                        "fieldline.mqtt.tls.cert = \"" + cert + "\"",
                        "fieldline.mqtt.tls.key = \"" + key + "\"",
                        "fieldline.http.port = 0",
                        "fieldline.http.host = \"127.0.0.1\"",
                        "fieldline.admin.username = \"admin@fuzz.local\"",
                        "fieldline.admin.password = \"fuzz-password-123\"",
                        "fieldline.demo-device.enabled = false",
                        "fieldline.warm-up.messages = 300",
                        "fieldline.warm-up.mqtt-messages = 160",
                        "fieldline.cassandra.contact-points = \"" + contact + "\"",
                        "fieldline.cassandra.keyspace = " + keyspace,
                        ItDriver.HOCON,
                        "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                            + cassandra.localDatacenter())))
            .withFallback(ConfigFactory.load())
            .resolve();
    FieldlineServer server = FieldlineServer.start(config);
    CqlSession cql =
        CqlSession.builder()
            .addContactPoint(cassandra.cqlAddress())
            .withLocalDatacenter(cassandra.localDatacenter())
            .withKeyspace(keyspace)
            .withConfigLoader(ItDriver.loader())
            .build();
    return new LiveServer(server, cql, clientContext(ca));
  }

  private static SSLContext clientContext(X509Bundle ca) throws GeneralSecurityException {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, ca.toTrustManagerFactory().getTrustManagers(), null);
    return context;
  }

  InetSocketAddress plain() {
    return new InetSocketAddress("127.0.0.1", server.mqttPort());
  }

  InetSocketAddress tls() {
    return new InetSocketAddress("127.0.0.1", server.mqttTlsPort());
  }

  /** A client TLS context that trusts the run's CA. */
  SSLContext clientTls() {
    return clientTls;
  }

  Device createDevice(String name, String token) {
    return server.registry().create(name, "fuzz", Optional.of(token)).toCompletableFuture().join();
  }

  long rows(Device device) {
    return cql.execute(
            "SELECT count(*) FROM ts_kv WHERE device_id = ? ALLOW FILTERING", device.id().value())
        .one()
        .getLong(0);
  }

  /** The sum of every sample of the server's Prometheus meters whose line starts with prefix. */
  double metric(String prefix) {
    return samples(prefix).values().stream().mapToDouble(Double::doubleValue).sum();
  }

  /** Every sample whose line starts with prefix, by its name and labels. */
  Map<String, Double> samples(String prefix) {
    Map<String, Double> samples = new TreeMap<>();
    server
        .metrics()
        .scrape()
        .lines()
        .filter(line -> line.startsWith(prefix))
        .forEach(
            line -> {
              int space = line.lastIndexOf(' ');
              samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            });
    return samples;
  }

  @Override
  public void close() {
    cql.close();
    server.close();
  }
}
