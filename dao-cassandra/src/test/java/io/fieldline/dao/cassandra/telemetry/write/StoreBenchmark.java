package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.CqlSession;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.cql.CassandraSessionFactory;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.schema.SchemaMigrator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The store's write throughput on a server-profile embedded node (C2 JIT, periodic commit log),
 * longer than {@link StoreThroughputIT}; not part of {@code mvn verify}. Usage (after {@code mvn
 * -pl dao-cassandra -am install -DskipTests}), from the repository root:
 *
 * <pre>
 * mvn -q -pl dao-cassandra dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=/tmp/cp
 * java -Dfieldline.cassandra.classpath-file=cassandra-embedded/runtime/target/cassandra.classpath \
 *   -cp dao-cassandra/target/test-classes:dao-cassandra/target/classes:$(cat /tmp/cp) \
 *   io.fieldline.dao.cassandra.telemetry.write.StoreBenchmark [devices] [warmup-seconds] [run-seconds] [sweep]
 * </pre>
 *
 * <p>With {@code sweep}, it runs K = 5 with 64, 256, 1024 and 2048 messages outstanding, twice, to
 * see how the in-flight bound trades latency for throughput.
 */
public final class StoreBenchmark {

  private StoreBenchmark() {}

  public static void main(String[] args) throws Exception {
    int devices = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    long warmupMs = (args.length > 1 ? Long.parseLong(args[1]) : 20) * 1000;
    long runMs = (args.length > 2 ? Long.parseLong(args[2]) : 15) * 1000;
    Path workDir = Files.createTempDirectory("fieldline-store-benchmark");
    try (EmbeddedCassandra cassandra =
        EmbeddedCassandra.create(
            EmbeddedCassandraConfig.defaults(workDir, EmbeddedCassandraConfig.Profile.SERVER))) {
      cassandra.start();
      Config root =
          ConfigFactory.parseString("fieldline.cassandra.keyspace = benchmark")
              .withFallback(ConfigFactory.defaultReference())
              .resolve();
      CassandraConfig config = CassandraConfig.from(root);
      try (CqlSession session =
          CassandraSessionFactory.open(
              root, config, List.of(cassandra.cqlAddress()), new SimpleMeterRegistry())) {
        new SchemaMigrator(session, config.keyspace())
            .migrate(config.replication(), config.deadLetterTtl().getSeconds());
        CassandraTelemetryStore store =
            new CassandraTelemetryStore(
                session, config, WriteLimiter.from(config), new SimpleMeterRegistry());
        if (args.length > 3 && args[3].equals("sweep")) {
          sweep(new LoadGenerator(devices), store, warmupMs, runMs);
          return;
        }
        StoreThroughputIT.measure(
                new LoadGenerator(devices),
                store,
                new StoreThroughputIT.PerRowWriter(session, config),
                warmupMs,
                runMs)
            .forEach(System.out::println);
      }
    }
  }

  private static void sweep(
      LoadGenerator load, CassandraTelemetryStore store, long warmupMs, long runMs) {
    load.run("warm-up", 5, warmupMs, 1024, store::writeTelemetry);
    for (int round = 0; round < 2; round++) {
      for (int window : new int[] {64, 256, 1024, 2048}) {
        System.out.println(
            load.run(
                "batched, " + window + " outstanding", 5, runMs, window, store::writeTelemetry));
      }
    }
  }
}
