package io.fieldline.perf;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.perf.provision.DeviceProvisioner;
import io.fieldline.perf.provision.ProvisionedDevice;
import io.fieldline.perf.simulations.ConnectionStorm;
import io.fieldline.perf.simulations.DevicesAtRate;
import io.fieldline.perf.simulations.GatewayFleet;
import io.fieldline.perf.simulations.LiveUpdates;
import io.fieldline.perf.simulations.RpcRoundTrip;
import io.fieldline.perf.verify.GatewayRowsCheck;
import io.fieldline.perf.verify.LedgerEntry;
import io.fieldline.perf.verify.StorageCheck;
import io.fieldline.perf.verify.StoredRowsCheck;
import io.fieldline.server.FieldlineServer;
import io.gatling.app.Gatling$;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Keeps the Gatling MQTT protocol from rotting: a real Fieldline server on the module's shared
 * Cassandra, ten devices provisioned over REST, a few seconds of {@link DevicesAtRate} run
 * in-process, then every acknowledged message is looked up in {@code ts_kv}; and {@link
 * RpcRoundTrip}'s devices answering two-way RPC calls made over REST; and {@link LiveUpdates}'
 * WebSocket subscribers hearing every message of the devices they watch; and {@link GatewayFleet}'s
 * gateways, every point of every acknowledged message found in its child's rows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatlingSmokeIT {

  private static final String ADMIN = "admin@perf.local";
  private static final String PASSWORD = "perf-password-123";
  private static final String KEYSPACE = "it_gatlingsmoke";
  private static final int DEVICES = 10;
  private static final int KEYS = 4;
  private static final int PER_ADDRESS_BURST = DEVICES / 2;

  private EmbeddedCassandra cassandra;
  private FieldlineServer server;
  private Path work;

  @BeforeAll
  void startServer() throws Exception {
    cassandra = SharedCassandra.get();
    work = Files.createTempDirectory("fieldline-gatling-it-");
    server = FieldlineServer.start(config(work.resolve("data")));
  }

  @AfterAll
  void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void should_store_every_acknowledged_message_when_devices_publish_at_a_rate() throws Exception {
    DeviceProvisioner provisioner =
        new DeviceProvisioner(URI.create("http://127.0.0.1:" + server.httpPort()));
    String auth = provisioner.login(ADMIN, PASSWORD);
    List<ProvisionedDevice> devices =
        provisioner.provision(auth, "smoke-", "smoke-token-", DEVICES, 4);
    // Provisioning is rerunnable: the same call returns the same devices.
    assertThat(provisioner.provision(auth, "smoke-", "smoke-token-", DEVICES, 4))
        .isEqualTo(devices);
    Path feeder = work.resolve("devices.csv");
    DeviceProvisioner.writeFeeder(feeder, devices);

    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("port", String.valueOf(server.mqttPort()));
    properties.put("feeder", feeder.toString());
    properties.put("devices", String.valueOf(DEVICES));
    properties.put("ratePerDevice", "5");
    properties.put("duration", "4");
    properties.put("rampConnectionsPerSec", "20");
    properties.put("keys", String.valueOf(KEYS));
    properties.put("sourceAddresses", String.valueOf(DEVICES));
    properties.put("summary", work.resolve("summary.json").toString());
    properties.put("ledger", work.resolve("ledger.csv").toString());
    int status = runGatling(DevicesAtRate.class.getName(), properties);

    assertThat(status).as("Gatling exit status (assertion: no KO)").isZero();
    JsonNode summary = new ObjectMapper().readTree(work.resolve("summary.json").toFile());
    long acked = summary.path("acked").asLong();
    assertThat(summary.path("connects").asLong()).isEqualTo(DEVICES);
    assertThat(acked).isGreaterThanOrEqualTo(DEVICES * 10L);
    assertThat(summary.path("sent").asLong()).isEqualTo(acked);
    summary.path("failures").forEach(count -> assertThat(count.asLong()).isZero());

    List<LedgerEntry> ledger = LedgerEntry.read(work.resolve("ledger.csv"));
    assertThat(ledger).hasSize(DEVICES);
    StorageCheck check = checkStored(devices, ledger);
    assertThat(check.acked()).isEqualTo(acked);
    assertThat(check.storedAcked()).isEqualTo(acked);
    assertThat(check.missing()).isZero();
    assertThat(check.partial()).isZero();
    assertThat(check.storedNotAcked()).isZero();
    assertThat(check.rows()).isEqualTo(acked * KEYS);
  }

  @Test
  void should_store_every_point_of_every_acknowledged_message_when_gateways_publish_for_children()
      throws Exception {
    DeviceProvisioner provisioner =
        new DeviceProvisioner(URI.create("http://127.0.0.1:" + server.httpPort()));
    String auth = provisioner.login(ADMIN, PASSWORD);
    int gateways = 2;
    int children = 5;
    List<ProvisionedDevice> feederDevices =
        provisioner.provisionGateways(auth, "smoke-gw-", "smoke-gw-token-", gateways);
    // Rerunnable: the gateways exist now, and are found again.
    assertThat(provisioner.provisionGateways(auth, "smoke-gw-", "smoke-gw-token-", gateways))
        .isEqualTo(feederDevices);
    Path feeder = work.resolve("gateways.csv");
    DeviceProvisioner.writeFeeder(feeder, feederDevices);

    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("port", String.valueOf(server.mqttPort()));
    properties.put("feeder", feeder.toString());
    properties.put("devices", String.valueOf(gateways));
    properties.put("children", String.valueOf(children));
    properties.put("ratePerDevice", "4");
    properties.put("duration", "3");
    properties.put("cold", "5");
    properties.put("rampConnectionsPerSec", "20");
    properties.put("keys", String.valueOf(KEYS));
    properties.put("sourceAddresses", String.valueOf(gateways));
    properties.put("summary", work.resolve("gateway-summary.json").toString());
    properties.put("ledger", work.resolve("gateway-ledger.csv").toString());
    int status = runGatling(GatewayFleet.class.getName(), properties);

    assertThat(status).as("Gatling exit status (assertion: no KO)").isZero();
    JsonNode summary = new ObjectMapper().readTree(work.resolve("gateway-summary.json").toFile());
    long acked = summary.path("acked").asLong();
    assertThat(summary.path("connects").asLong()).isEqualTo(gateways);
    assertThat(summary.path("pointsPerMessage").asInt()).isEqualTo(children);
    assertThat(acked).isGreaterThanOrEqualTo(gateways * 8L);
    summary.path("failures").forEach(count -> assertThat(count.asLong()).isZero());

    List<LedgerEntry> ledger = LedgerEntry.read(work.resolve("gateway-ledger.csv"));
    Map<String, Object> check;
    try (CqlSession cql =
        Cql.open(cassandra.cqlAddress().getHostString() + ":" + cassandra.cqlAddress().getPort())) {
      check =
          GatewayRowsCheck.check(
              provisioner,
              auth,
              new StoredRowsCheck(cql, KEYSPACE),
              feederDevices,
              ledger,
              children,
              KEYS);
    }
    assertThat(check)
        .containsEntry("childrenFound", (long) gateways * children)
        .containsEntry("messagesAcked", acked)
        .containsEntry("acked", acked * children)
        .containsEntry("storedAcked", acked * children)
        .containsEntry("missing", 0L)
        .containsEntry("partial", 0L)
        .containsEntry("storedNotAcked", 0L)
        .containsEntry("rows", acked * children * KEYS);
  }

  @Test
  void should_resume_every_device_and_store_everything_after_a_reconnect_storm() throws Exception {
    DeviceProvisioner provisioner =
        new DeviceProvisioner(URI.create("http://127.0.0.1:" + server.httpPort()));
    String auth = provisioner.login(ADMIN, PASSWORD);
    List<ProvisionedDevice> devices =
        provisioner.provision(auth, "storm-", "storm-token-", DEVICES, 4);
    Path feeder = work.resolve("storm-devices.csv");
    DeviceProvisioner.writeFeeder(feeder, devices);

    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("port", String.valueOf(server.mqttPort()));
    properties.put("feeder", feeder.toString());
    properties.put("devices", String.valueOf(DEVICES));
    properties.put("storm", "reconnect");
    properties.put("ratePerDevice", "5");
    properties.put("hold", "2");
    properties.put("duration", "2");
    properties.put("rampConnectionsPerSec", "20");
    properties.put("keys", String.valueOf(KEYS));
    properties.put("sourceAddresses", String.valueOf(DEVICES));
    properties.put("summary", work.resolve("storm-summary.json").toString());
    properties.put("ledger", work.resolve("storm-ledger.csv").toString());
    int status = runGatling(ConnectionStorm.class.getName(), properties);

    assertThat(status).as("Gatling exit status (assertion: no KO)").isZero();
    JsonNode summary = new ObjectMapper().readTree(work.resolve("storm-summary.json").toFile());
    assertThat(summary.path("drops").asLong()).isEqualTo(DEVICES);
    assertThat(summary.path("connects").asLong()).isEqualTo(2L * DEVICES);
    assertThat(summary.path("resumeAfterDropMillis").path("count").asLong()).isEqualTo(DEVICES);
    assertThat(summary.path("connackRefusals").size()).isZero();
    assertThat(
            summary
                .path("windows")
                .path("afterDrop")
                .path("ackLatencyMillis")
                .path("count")
                .asLong())
        .isGreaterThanOrEqualTo(DEVICES * 5L);
    long acked = summary.path("acked").asLong();
    List<LedgerEntry> ledger = LedgerEntry.read(work.resolve("storm-ledger.csv"));
    assertThat(ledger)
        .as("one ledger per connection, before and after the drop")
        .hasSize(2 * DEVICES);
    StorageCheck check = checkStored(devices, ledger);
    assertThat(check.acked()).isEqualTo(acked);
    assertThat(check.storedAcked()).isEqualTo(acked);
    assertThat(check.missing()).isZero();
  }

  @Test
  void should_answer_every_two_way_call_with_its_echo_when_devices_respond_to_rpc()
      throws Exception {
    DeviceProvisioner provisioner =
        new DeviceProvisioner(URI.create("http://127.0.0.1:" + server.httpPort()));
    String auth = provisioner.login(ADMIN, PASSWORD);
    List<ProvisionedDevice> devices = provisioner.provision(auth, "rpc-", "rpc-token-", DEVICES, 4);
    Path feeder = work.resolve("rpc-devices.csv");
    DeviceProvisioner.writeFeeder(feeder, devices);
    int rate = 20;
    int seconds = 3;

    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("port", String.valueOf(server.mqttPort()));
    properties.put("httpUrl", "http://127.0.0.1:" + server.httpPort());
    properties.put("restUser", ADMIN);
    properties.put("restPassword", PASSWORD);
    properties.put("feeder", feeder.toString());
    properties.put("devices", String.valueOf(DEVICES));
    properties.put("rpcRate", String.valueOf(rate));
    properties.put("rpcTimeout", "5000");
    properties.put("duration", String.valueOf(seconds));
    properties.put("settle", "1");
    properties.put("cold", "5");
    properties.put("rampConnectionsPerSec", "20");
    properties.put("sourceAddresses", String.valueOf(DEVICES));
    properties.put("summary", work.resolve("rpc-summary.json").toString());
    int status = runGatling(RpcRoundTrip.class.getName(), properties);

    assertThat(status).as("Gatling exit status (assertion: no KO)").isZero();
    JsonNode summary = new ObjectMapper().readTree(work.resolve("rpc-summary.json").toFile());
    JsonNode calls = summary.path("rpcCalls");
    long made = calls.path("calls").asLong();
    assertThat(made).isEqualTo((long) rate * seconds);
    assertThat(calls.path("answered").asLong()).isEqualTo(made);
    assertThat(calls.path("lost").asLong()).isZero();
    assertThat(calls.path("statuses").path("200").asLong()).isEqualTo(made);
    assertThat(calls.path("roundTripMillis").path("count").asLong()).isEqualTo(made);
    JsonNode responder = summary.path("rpcResponder");
    assertThat(responder.path("requested").asLong()).isEqualTo(made);
    assertThat(responder.path("answered").asLong()).isEqualTo(made);
    assertThat(responder.path("answerAcked").asLong()).isEqualTo(made);
    assertThat(responder.path("unanswerable").asLong()).isZero();
    assertThat(summary.path("connects").asLong()).isEqualTo(DEVICES);
    summary.path("failures").forEach(count -> assertThat(count.asLong()).isZero());
  }

  @Test
  void should_deliver_every_acknowledged_message_of_a_watched_device_when_dashboards_subscribe()
      throws Exception {
    DeviceProvisioner provisioner =
        new DeviceProvisioner(URI.create("http://127.0.0.1:" + server.httpPort()));
    String auth = provisioner.login(ADMIN, PASSWORD);
    List<ProvisionedDevice> devices =
        provisioner.provision(auth, "live-", "live-token-", DEVICES, 4);
    Path feeder = work.resolve("live-devices.csv");
    DeviceProvisioner.writeFeeder(feeder, devices);

    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("port", String.valueOf(server.mqttPort()));
    properties.put("httpUrl", "http://127.0.0.1:" + server.httpPort());
    properties.put("restUser", ADMIN);
    properties.put("restPassword", PASSWORD);
    properties.put("feeder", feeder.toString());
    properties.put("devices", String.valueOf(DEVICES));
    properties.put("ratePerDevice", "2");
    properties.put("duration", "4");
    properties.put("cold", "5");
    properties.put("subscriptions", "5");
    properties.put("wsSessions", "2");
    properties.put("wsGrace", "2");
    // A keep-alive every second: Gatling empties a socket's unmatched messages on every send, so
    // updates are lost to the measurement unless they are taken right before it.
    properties.put("wsKeepAlive", "1");
    properties.put("rampConnectionsPerSec", "20");
    properties.put("sourceAddresses", String.valueOf(DEVICES));
    properties.put("summary", work.resolve("live-summary.json").toString());
    int status = runGatling(LiveUpdates.class.getName(), properties);

    assertThat(status).as("Gatling exit status (assertion: no KO)").isZero();
    JsonNode summary = new ObjectMapper().readTree(work.resolve("live-summary.json").toFile());
    JsonNode live = summary.path("liveUpdates");
    assertThat(live.path("subscriptionsStarted").asInt()).isEqualTo(5);
    assertThat(live.path("errors").asLong()).isZero();
    assertThat(live.path("unmatched").asLong()).isZero();
    // 5 watched devices × 2 msg/s × 4 s, less what the first updates carried.
    assertThat(live.path("expected").asLong()).isGreaterThanOrEqualTo(30);
    assertThat(live.path("lost").asLong()).isZero();
    assertThat(live.path("updateLatencyMillis").path("count").asLong())
        .isEqualTo(live.path("received").asLong())
        .isGreaterThanOrEqualTo(live.path("expected").asLong());
    assertThat(summary.path("connects").asLong()).isEqualTo(DEVICES);
  }

  /** Every acknowledged message of {@code ledger} looked up row by row in the test's Cassandra. */
  private StorageCheck checkStored(List<ProvisionedDevice> devices, List<LedgerEntry> ledger)
      throws InterruptedException {
    try (CqlSession cql =
        Cql.open(cassandra.cqlAddress().getHostString() + ":" + cassandra.cqlAddress().getPort())) {
      return new StoredRowsCheck(cql, KEYSPACE).check(devices, ledger, KEYS);
    }
  }

  /**
   * Runs one simulation in this JVM, its parameters as system properties (as gatling:test does).
   */
  private int runGatling(String simulation, Map<String, String> properties) {
    properties.forEach(System::setProperty);
    try {
      return Gatling$.MODULE$.fromArgs(
          new String[] {"-s", simulation, "-rf", work.resolve("gatling").toString(), "-nr"});
    } finally {
      properties.keySet().forEach(System::clearProperty);
    }
  }

  private Config config(Path dataDir) {
    String contact =
        cassandra.cqlAddress().getHostString() + ":" + cassandra.cqlAddress().getPort();
    return ConfigFactory.parseString(
            String.join(
                "\n",
                "fieldline.data-dir = \"" + dataDir + "\"",
                "fieldline.mqtt.port = 0",
                "fieldline.mqtt.host = \"127.0.0.1\"",
                "fieldline.http.port = 0",
                "fieldline.http.host = \"127.0.0.1\"",
                "fieldline.admin.username = \"" + ADMIN + "\"",
                "fieldline.admin.password = \"" + PASSWORD + "\"",
                "fieldline.demo-device.enabled = false",
                // Tight per-address budgets: every device must come from its own source address
                // (sourceAddresses), or the ten connects from one address are refused.
                "fieldline.mqtt.per-address-connection-burst = " + PER_ADDRESS_BURST,
                "fieldline.mqtt.per-address-connection-rate = 1",
                "fieldline.cassandra.contact-points = \"" + contact + "\"",
                "fieldline.cassandra.keyspace = " + KEYSPACE,
                "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                    + cassandra.localDatacenter(),
                // As the server's ITs (server's ItDriver): the driver answers a CREATE TABLE only
                // after a schema refresh, which waits out this window first (1 s per table).
                "datastax-java-driver.advanced.metadata.schema.debouncer.window = 0 seconds"))
        .withFallback(ConfigFactory.load())
        .resolve();
  }
}
