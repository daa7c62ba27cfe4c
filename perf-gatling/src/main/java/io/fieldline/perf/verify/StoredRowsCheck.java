package io.fieldline.perf.verify;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fieldline.perf.CommandLine;
import io.fieldline.perf.Cql;
import io.fieldline.perf.provision.DeviceProvisioner;
import io.fieldline.perf.provision.ProvisionedDevice;
import io.fieldline.perf.telemetry.TelemetryPayload;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;

/**
 * Counts, for every acknowledged message of a run, its rows in {@code <keyspace>.ts_kv}: message
 * {@code n} of a connection is stored when each of the payload's {@code keys} has a row with {@code
 * ts = baseTs + n} in one of the device's partitions. Reads the feeder (token → device id) and the
 * ledger the simulation wrote; the device's partitions are found with {@code SELECT DISTINCT} on
 * {@code ts_kv} itself, not through Fieldline's partition index.
 *
 * <pre>
 * java -cp ... io.fieldline.perf.verify.StoredRowsCheck --cql 127.0.0.1:9042 --keyspace fieldline \
 *   --feeder devices.csv --ledger ledger.csv --keys 4 [--out check.json]
 * </pre>
 */
public final class StoredRowsCheck {

  private static final int MAX_IN_FLIGHT = 128;

  private final CqlSession session;
  private final String keyspace;

  public StoredRowsCheck(CqlSession session, String keyspace) {
    this.session = session;
    this.keyspace = keyspace;
  }

  public static void main(String[] args) throws Exception {
    CommandLine line = CommandLine.parse(args);
    StorageCheck result;
    long start = System.nanoTime();
    try (CqlSession session = Cql.open(line.get("cql"))) {
      result =
          new StoredRowsCheck(session, line.get("keyspace", "fieldline"))
              .check(
                  DeviceProvisioner.readFeeder(Path.of(line.get("feeder"))),
                  LedgerEntry.read(Path.of(line.get("ledger"))),
                  line.getInt("keys", 4));
    }
    System.out.printf(
        "acked=%d stored=%d missing=%d partial=%d stored_not_acked=%d rows=%d (%.1f s)%n",
        result.acked(),
        result.storedAcked(),
        result.missing(),
        result.partial(),
        result.storedNotAcked(),
        result.rows(),
        (System.nanoTime() - start) / 1e9);
    String out = line.optional("out");
    if (out != null) {
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .writeValue(Path.of(out).toFile(), result);
    }
  }

  /** Compares the ledger with the stored rows; blocks (a bench tool, not a driver thread). */
  public StorageCheck check(List<ProvisionedDevice> feeder, List<LedgerEntry> ledger, int keys)
      throws InterruptedException {
    Map<String, UUID> deviceOfToken = new HashMap<>();
    for (ProvisionedDevice device : feeder) {
      deviceOfToken.put(device.token(), UUID.fromString(device.id()));
    }
    Map<UUID, List<Long>> partitions = partitions();
    PreparedStatement select =
        session.prepare(
            "SELECT ts FROM "
                + keyspace
                + ".ts_kv"
                + " WHERE device_id = ? AND part = ? AND key = ? AND ts >= ? AND ts < ?");
    List<String> keyNames = TelemetryPayload.KEYS.subList(0, keys);
    Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
    List<CompletableFuture<Void>> all = new ArrayList<>();
    List<BitSet[]> found = new ArrayList<>(ledger.size());
    // One BitSet per query (device, part, key): callbacks of different queries never share one.
    List<List<List<BitSet>>> pieces = new ArrayList<>(ledger.size());
    long unknown = 0;
    for (LedgerEntry entry : ledger) {
      found.add(new BitSet[keys]);
      List<List<BitSet>> perKey = new ArrayList<>(keys);
      pieces.add(perKey);
      UUID device = deviceOfToken.get(entry.username());
      if (device == null) {
        unknown++;
        continue;
      }
      for (int k = 0; k < keys; k++) {
        List<BitSet> perPart = new ArrayList<>(1);
        perKey.add(perPart);
        for (long part : partitions.getOrDefault(device, List.of())) {
          BitSet rows = new BitSet((int) entry.sent());
          perPart.add(rows);
          inFlight.acquire();
          CompletableFuture<Void> done = new CompletableFuture<>();
          all.add(done);
          done.whenComplete((ok, error) -> inFlight.release());
          collect(
              session.executeAsync(
                  select.bind(
                      device,
                      part,
                      keyNames.get(k),
                      entry.baseTs(),
                      entry.baseTs() + entry.sent())),
              entry.baseTs(),
              rows,
              done);
        }
      }
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).join();
    for (int i = 0; i < ledger.size(); i++) {
      List<List<BitSet>> perKey = pieces.get(i);
      for (int k = 0; k < perKey.size(); k++) {
        BitSet merged = new BitSet();
        perKey.get(k).forEach(merged::or);
        found.get(i)[k] = merged;
      }
    }
    return tally(ledger, found, keys, unknown);
  }

  private static StorageCheck tally(
      List<LedgerEntry> ledger, List<BitSet[]> found, int keys, long unknown) {
    long sent = 0;
    long acked = 0;
    long storedAcked = 0;
    long missing = 0;
    long partial = 0;
    long storedNotAcked = 0;
    long rows = 0;
    for (int i = 0; i < ledger.size(); i++) {
      LedgerEntry entry = ledger.get(i);
      sent += entry.sent();
      acked += entry.ackedCount();
      BitSet[] perKey = found.get(i);
      if (perKey[0] == null) {
        continue;
      }
      BitSet all = (BitSet) perKey[0].clone();
      BitSet any = (BitSet) perKey[0].clone();
      for (BitSet keyRows : perKey) {
        rows += keyRows.cardinality();
        all.and(keyRows);
        any.or(keyRows);
      }
      BitSet ackedAll = (BitSet) entry.acked().clone();
      ackedAll.and(all);
      storedAcked += ackedAll.cardinality();
      BitSet ackedAny = (BitSet) entry.acked().clone();
      ackedAny.and(any);
      partial += ackedAny.cardinality() - ackedAll.cardinality();
      missing += entry.ackedCount() - ackedAny.cardinality();
      BitSet notAcked = (BitSet) any.clone();
      notAcked.andNot(entry.acked());
      storedNotAcked += notAcked.cardinality();
    }
    return new StorageCheck(
        ledger.size(),
        sent,
        acked,
        storedAcked,
        missing,
        partial,
        storedNotAcked,
        rows,
        keys,
        unknown);
  }

  /** Every (device, part) of ts_kv; a scan of partition keys only. */
  private Map<UUID, List<Long>> partitions() {
    Map<UUID, List<Long>> out = new HashMap<>();
    for (Row row : session.execute("SELECT DISTINCT device_id, part FROM " + keyspace + ".ts_kv")) {
      out.computeIfAbsent(row.getUuid(0), id -> new ArrayList<>(1)).add(row.getLong(1));
    }
    return out;
  }

  /** Sets bit {@code ts - baseTs} for every row of every page; rows are only touched here. */
  private static void collect(
      CompletionStage<AsyncResultSet> page,
      long baseTs,
      BitSet rows,
      CompletableFuture<Void> done) {
    page.whenComplete(
        (result, error) -> {
          if (error != null) {
            done.completeExceptionally(error);
            return;
          }
          for (Row row : result.currentPage()) {
            rows.set((int) (row.getLong(0) - baseTs));
          }
          if (result.hasMorePages()) {
            collect(result.fetchNextPage(), baseTs, rows, done);
          } else {
            done.complete(null);
          }
        });
  }
}
