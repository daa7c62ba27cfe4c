package io.fieldline.dao.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CassandraConfigTest {

  private static Config config(String hocon) {
    return ConfigFactory.parseString(hocon)
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  @Test
  void should_use_documented_defaults_when_nothing_is_set() {
    CassandraConfig c = CassandraConfig.from(config(""));

    assertThat(c.contactPoints()).isEmpty();
    assertThat(c.keyspace()).isEqualTo("fieldline");
    assertThat(c.replication()).isEqualTo("{'class':'SimpleStrategy','replication_factor':1}");
    assertThat(c.createSchema()).isTrue();
    assertThat(c.tsPartitioning()).isEqualTo(TsPartitioning.MONTHS);
    assertThat(c.tsTtlSeconds()).isZero();
    assertThat(c.deadLetterTtl()).isEqualTo(Duration.ofDays(7));
    assertThat(c.rpcTtl()).isEqualTo(Duration.ofDays(7));
    assertThat(c.writeConsistency()).isEqualTo(DefaultConsistencyLevel.LOCAL_QUORUM);
    assertThat(c.maxInflight()).isEqualTo(1024);
    assertThat(c.maxQueued()).isEqualTo(8192);
    assertThat(c.maxBatchStatements()).isEqualTo(100);
    assertThat(c.maxBatchBytes()).isEqualTo(5 * 1024);
    assertThat(c.coalesce())
        .isEqualTo(new CassandraConfig.CoalesceConfig(true, 4, 512, 40 * 1024, 32_768));
    assertThat(c.partitionsCacheSize()).isEqualTo(200_000);
    assertThat(c.deviceCache().ttl()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.deviceCache().negativeTtl()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.deviceCache().maxSize()).isEqualTo(100_000);
    assertThat(c.passwordHashing())
        .isEqualTo(new CassandraConfig.PasswordHashingConfig(10, 2, 500));
    assertThat(c.reads())
        .isEqualTo(new CassandraConfig.ReadsConfig(8, 64, 16, Duration.ofSeconds(5), 4));
  }

  @Test
  void should_list_every_bad_read_bound_when_the_read_budget_is_invalid() {
    assertThatThrownBy(
            () ->
                CassandraConfig.from(
                    config(
                        "fieldline.cassandra.reads {\n"
                            + " max-inflight = 0\n"
                            + " max-per-user = 0\n"
                            + " max-wait = 0 s\n"
                            + " statements-per-query = 0\n"
                            + "}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reads.max-inflight")
        .hasMessageContaining("reads.max-per-user")
        .hasMessageContaining("reads.max-wait")
        .hasMessageContaining("reads.statements-per-query");
  }

  @Test
  void should_read_every_key_when_overridden() {
    CassandraConfig c =
        CassandraConfig.from(
            config(
                "fieldline.cassandra {\n"
                    + " contact-points = \"db1:9142, db2 ,[::1]:9043\"\n"
                    + " keyspace = tenant_1\n"
                    + " replication = \"{'class':'NetworkTopologyStrategy','dc1':3}\"\n"
                    + " create-schema = false\n"
                    + " ts-partitioning = DAYS\n"
                    + " ts-ttl = 86400\n"
                    + " dead-letter-ttl = 1 day\n"
                    + " rpc-ttl = 2 hours\n"
                    + " write-consistency = ONE\n"
                    + " max-inflight = 256\n"
                    + " max-queued = 0\n"
                    + " max-batch-statements = 20\n"
                    + " max-batch-bytes = 16 KiB\n"
                    + " coalesce-writes = false\n"
                    + " coalesce { max-batches-in-flight = 2, max-batch-statements = 64,"
                    + " max-batch-bytes = 8 KiB, max-queued-writes = 100 }\n"
                    + " partitions-cache-size = 10\n"
                    + " device-cache { ttl = 1 minute, negative-ttl = 0s, max-size = 5 }\n"
                    + " password-hashing { cost = 4, threads = 1, max-queued = 0 }\n"
                    + "}"));

    assertThat(c.contactPoints())
        .containsExactly(
            InetSocketAddress.createUnresolved("db1", 9142),
            InetSocketAddress.createUnresolved("db2", 9042),
            InetSocketAddress.createUnresolved("::1", 9043));
    assertThat(c.keyspace()).isEqualTo("tenant_1");
    assertThat(c.createSchema()).isFalse();
    assertThat(c.tsPartitioning()).isEqualTo(TsPartitioning.DAYS);
    assertThat(c.tsTtlSeconds()).isEqualTo(86_400);
    assertThat(c.deadLetterTtl()).isEqualTo(Duration.ofDays(1));
    assertThat(c.rpcTtl()).isEqualTo(Duration.ofHours(2));
    assertThat(c.writeConsistency()).isEqualTo(DefaultConsistencyLevel.ONE);
    assertThat(c.maxInflight()).isEqualTo(256);
    assertThat(c.maxQueued()).isZero();
    assertThat(c.maxBatchStatements()).isEqualTo(20);
    assertThat(c.maxBatchBytes()).isEqualTo(16 * 1024);
    assertThat(c.coalesce())
        .isEqualTo(new CassandraConfig.CoalesceConfig(false, 2, 64, 8 * 1024, 100));
    assertThat(c.partitionsCacheSize()).isEqualTo(10);
    assertThat(c.deviceCache())
        .isEqualTo(
            new CassandraConfig.DeviceCacheConfig(Duration.ofMinutes(1), Duration.ZERO, 5, true));
    assertThat(c.passwordHashing()).isEqualTo(new CassandraConfig.PasswordHashingConfig(4, 1, 0));
  }

  @Test
  void should_list_every_error_when_several_keys_are_invalid() {
    Config bad =
        config(
            "fieldline.cassandra {\n"
                + " keyspace = \"Bad-Name\"\n"
                + " replication = \"rf=1\"\n"
                + " ts-partitioning = WEEKS\n"
                + " ts-ttl = -1\n"
                + " dead-letter-ttl = 0s\n"
                + " rpc-ttl = 0s\n"
                + " write-consistency = SERIAL\n"
                + " max-inflight = 0\n"
                + " max-queued = -1\n"
                + " max-batch-statements = 1\n"
                + " max-batch-bytes = 10\n"
                + " coalesce { max-batches-in-flight = 0, max-batch-statements = 1,"
                + " max-batch-bytes = 2 MiB, max-queued-writes = 3 }\n"
                + " device-cache.max-size = zero\n"
                + " password-hashing { cost = 3, threads = 0, max-queued = -1 }\n"
                + " contact-points = \"host:notaport\"\n"
                + "}");

    assertThatThrownBy(() -> CassandraConfig.from(bad))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll(
            "fieldline.cassandra.keyspace",
            "fieldline.cassandra.replication",
            "fieldline.cassandra.ts-partitioning",
            "fieldline.cassandra.ts-ttl",
            "fieldline.cassandra.dead-letter-ttl",
            "fieldline.cassandra.rpc-ttl",
            "fieldline.cassandra.write-consistency",
            "fieldline.cassandra.max-inflight",
            "fieldline.cassandra.max-queued",
            "fieldline.cassandra.max-batch-statements",
            "fieldline.cassandra.max-batch-bytes",
            "fieldline.cassandra.coalesce.max-batches-in-flight",
            "fieldline.cassandra.coalesce.max-batch-statements",
            "fieldline.cassandra.coalesce.max-batch-bytes",
            "fieldline.cassandra.coalesce.max-queued-writes",
            "fieldline.cassandra.device-cache.max-size",
            "fieldline.cassandra.password-hashing.cost",
            "fieldline.cassandra.password-hashing.threads",
            "fieldline.cassandra.password-hashing.max-queued",
            "fieldline.cassandra.contact-points");
  }

  @Test
  void should_report_a_missing_key_when_the_block_is_incomplete() {
    Config missing =
        ConfigFactory.parseString("fieldline.cassandra { keyspace = x }")
            .withFallback(ConfigFactory.parseString("datastax-java-driver {}"));

    assertThatThrownBy(() -> CassandraConfig.from(missing))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fieldline.cassandra.max-inflight")
        .hasMessageContaining("fieldline.cassandra.replication");
  }

  @Test
  void should_carry_tuned_driver_options_when_reference_is_loaded() {
    Config driver = config("").getConfig("datastax-java-driver");

    assertThat(driver.getInt("advanced.connection.max-requests-per-connection")).isEqualTo(32768);
    assertThat(driver.getInt("advanced.connection.pool.local.size")).isEqualTo(1);
    assertThat(driver.getDuration("basic.request.timeout")).isEqualTo(Duration.ofSeconds(5));
    assertThat(driver.getString("advanced.protocol.version")).isEqualTo("V4");
    assertThat(driver.getString("basic.request.consistency")).isEqualTo("LOCAL_QUORUM");
    assertThat(driver.getBoolean("basic.request.default-idempotence")).isFalse();
    assertThat(driver.getBoolean("advanced.reconnect-on-init")).isTrue();
    assertThat(driver.getDuration("advanced.reconnection-policy.base-delay"))
        .isEqualTo(Duration.ofSeconds(1));
    assertThat(driver.getDuration("advanced.reconnection-policy.max-delay"))
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(driver.getString("basic.load-balancing-policy.local-datacenter"))
        .isEqualTo("datacenter1");
    assertThat(driver.getString("advanced.throttler.class"))
        .isEqualTo("PassThroughRequestThrottler");
    assertThat(driver.getStringList("advanced.metrics.session.enabled"))
        .noneMatch(metric -> metric.startsWith("throttling."));
  }

  @Test
  void should_refuse_the_config_when_a_driver_throttler_is_configured() {
    Config throttled =
        config(
            "datastax-java-driver.advanced.throttler {\n"
                + " class = ConcurrencyLimitingRequestThrottler\n"
                + " max-concurrent-requests = 100\n"
                + " max-queue-size = 1000\n"
                + "}\n"
                + "fieldline.cassandra.max-queued = -1");

    assertThatThrownBy(() -> CassandraConfig.from(throttled))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll(
            "datastax-java-driver.advanced.throttler.class: must stay PassThroughRequestThrottler",
            "fieldline.cassandra.max-queued");
  }

  @Test
  void should_accept_the_pass_through_throttler_when_named_in_full() {
    CassandraConfig c =
        CassandraConfig.from(
            config(
                "datastax-java-driver.advanced.throttler.class ="
                    + " com.datastax.oss.driver.internal.core.session.throttling"
                    + ".PassThroughRequestThrottler"));

    assertThat(c.maxInflight()).isEqualTo(1024);
  }

  @Test
  void should_parse_contact_points_when_ports_are_missing_or_explicit() {
    assertThat(CassandraConfig.parseContactPoints(" a:1 , b "))
        .containsExactly(
            InetSocketAddress.createUnresolved("a", 1),
            InetSocketAddress.createUnresolved("b", 9042));
    assertThat(CassandraConfig.parseContactPoints("")).isEmpty();
    assertThatThrownBy(() -> CassandraConfig.parseContactPoints("a:70000"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
