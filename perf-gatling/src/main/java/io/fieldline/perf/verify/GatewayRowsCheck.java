package io.fieldline.perf.verify;

import com.datastax.oss.driver.api.core.CqlSession;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fieldline.perf.CommandLine;
import io.fieldline.perf.Cql;
import io.fieldline.perf.provision.DeviceProvisioner;
import io.fieldline.perf.provision.ProvisionedDevice;
import io.fieldline.perf.telemetry.GatewayPayload;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@link StoredRowsCheck} for a gateway run ({@code GatewayFleet}): every point of every
 * acknowledged gateway message must be in its child's rows. The children are those the gateways
 * named ({@link GatewayPayload#childName}), created by Fieldline on first sight and found here by
 * name over REST ({@code GET /api/tenant/devices?deviceName=}); each child then stands for a device
 * of its own whose ledger is its gateway's (message {@code n} of the gateway is the child's point
 * with {@code ts = baseTs + n}). Counts are in points: {@code acked} = acknowledged messages ×
 * children.
 *
 * <pre>
 * java -cp ... io.fieldline.perf.verify.GatewayRowsCheck --url http://127.0.0.1:8080 \
 *   --user admin@fieldline.local --password secret --cql 127.0.0.1:9042 --keyspace fieldline \
 *   --feeder gateways.csv --ledger ledger.csv --children 100 --keys 4 [--out check.json]
 * </pre>
 */
public final class GatewayRowsCheck {

  private GatewayRowsCheck() {}

  /**
   * The gateways' ledger as the children's: a feeder line ({@code name, id, token = name}) and a
   * ledger entry (the gateway's, under the child's name) for every child of every gateway in {@code
   * ledger} that {@code childIds} (id by child name) knows. Children it does not know were never
   * created: they are left out and counted by the caller.
   *
   * @param gatewayNames gateway name by access token (the ledger's username)
   */
  static Children expand(
      Map<String, String> gatewayNames,
      List<LedgerEntry> ledger,
      int children,
      Map<String, String> childIds) {
    List<ProvisionedDevice> feeder = new ArrayList<>();
    List<LedgerEntry> childLedger = new ArrayList<>();
    Set<String> gatewaysSeen = new HashSet<>();
    long ackedOfMissingChildren = 0;
    for (LedgerEntry entry : ledger) {
      String gateway = gatewayNames.getOrDefault(entry.username(), entry.username());
      gatewaysSeen.add(gateway);
      for (int i = 0; i < children; i++) {
        String child = GatewayPayload.childName(gateway, i);
        String id = childIds.get(child);
        if (id == null) {
          ackedOfMissingChildren += entry.ackedCount();
          continue;
        }
        feeder.add(new ProvisionedDevice(child, id, child));
        childLedger.add(new LedgerEntry(child, entry.baseTs(), entry.sent(), entry.acked()));
      }
    }
    return new Children(
        feeder, childLedger, (long) gatewaysSeen.size() * children, ackedOfMissingChildren);
  }

  /**
   * The children's feeder and ledger (one entry per child and gateway connection), with the
   * children expected (gateways of the ledger × children) and the acknowledged points of children
   * not found.
   */
  record Children(
      List<ProvisionedDevice> feeder,
      List<LedgerEntry> ledger,
      long expected,
      long ackedOfMissingChildren) {}

  /**
   * The check's outcome as written to {@code --out}: {@link StorageCheck}'s fields in points (the
   * acknowledged points of children never found count as missing), plus {@code unit}, {@code
   * childrenExpected}, {@code childrenFound} and {@code messagesAcked}.
   */
  static Map<String, Object> result(
      StorageCheck points, Children children, long childrenFound, long messagesAcked) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("unit", "points");
    out.put("connections", points.connections());
    out.put("sent", points.sent());
    out.put("acked", points.acked() + children.ackedOfMissingChildren());
    out.put("storedAcked", points.storedAcked());
    out.put("missing", points.missing() + children.ackedOfMissingChildren());
    out.put("partial", points.partial());
    out.put("storedNotAcked", points.storedNotAcked());
    out.put("rows", points.rows());
    out.put("keys", points.keys());
    out.put("unknownTokens", points.unknownTokens());
    out.put("childrenExpected", children.expected());
    out.put("childrenFound", childrenFound);
    out.put("messagesAcked", messagesAcked);
    return out;
  }

  public static void main(String[] args) throws Exception {
    CommandLine line = CommandLine.parse(args);
    long start = System.nanoTime();
    DeviceProvisioner rest = new DeviceProvisioner(URI.create(line.get("url")));
    String auth = rest.login(line.get("user"), line.get("password"));
    Map<String, Object> result;
    try (CqlSession session = Cql.open(line.get("cql"))) {
      result =
          check(
              rest,
              auth,
              new StoredRowsCheck(session, line.get("keyspace", "fieldline")),
              DeviceProvisioner.readFeeder(Path.of(line.get("feeder"))),
              LedgerEntry.read(Path.of(line.get("ledger"))),
              line.getInt("children", 100),
              line.getInt("keys", 4));
    }
    System.out.printf(
        "gateway messages acked=%s; points acked=%s stored=%s missing=%s partial=%s"
            + " stored_not_acked=%s; children found %s of %s (%.1f s)%n",
        result.get("messagesAcked"),
        result.get("acked"),
        result.get("storedAcked"),
        result.get("missing"),
        result.get("partial"),
        result.get("storedNotAcked"),
        result.get("childrenFound"),
        result.get("childrenExpected"),
        (System.nanoTime() - start) / 1e9);
    String out = line.optional("out");
    if (out != null) {
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .writeValue(Path.of(out).toFile(), result);
    }
  }

  /**
   * Finds the children of the {@code gateways} (feeder) over REST, then looks up every point of
   * every acknowledged message of {@code ledger} with {@code rows}; the outcome as {@link #result}.
   */
  public static Map<String, Object> check(
      DeviceProvisioner rest,
      String auth,
      StoredRowsCheck rows,
      List<ProvisionedDevice> gateways,
      List<LedgerEntry> ledger,
      int children,
      int keys)
      throws IOException, InterruptedException {
    Map<String, String> gatewayNames = new HashMap<>();
    for (ProvisionedDevice gateway : gateways) {
      gatewayNames.put(gateway.token(), gateway.name());
    }
    Map<String, String> childIds = new HashMap<>();
    for (LedgerEntry entry : ledger) {
      String gateway = gatewayNames.getOrDefault(entry.username(), entry.username());
      for (int i = 0; i < children; i++) {
        String child = GatewayPayload.childName(gateway, i);
        if (!childIds.containsKey(child)) {
          rest.findDevice(auth, child).ifPresent(id -> childIds.put(child, id));
        }
      }
    }
    Children expanded = expand(gatewayNames, ledger, children, childIds);
    StorageCheck points = rows.check(expanded.feeder(), expanded.ledger(), keys);
    long messagesAcked = ledger.stream().mapToLong(LedgerEntry::ackedCount).sum();
    return result(points, expanded, childIds.size(), messagesAcked);
  }
}
