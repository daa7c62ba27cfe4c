package io.fieldline.dao.cassandra.deadletter;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.deadletter.DeadLetter;
import io.fieldline.common.deadletter.StoredDeadLetter;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class CassandraDeadLetterStoreIT extends CassandraTestBase {

  private CassandraDeadLetterStore store;

  @BeforeAll
  void createStore() {
    store = new CassandraDeadLetterStore(session, config, WriteLimiter.from(config), registry);
  }

  @Test
  void should_read_back_raw_payloads_newest_first_when_written() {
    DeviceId device = DeviceId.random();
    byte[] garbage = {'{', 0, (byte) 0xff, 'x'};

    await(
        store.write(new DeadLetter(device, 1_000, "v1/devices/me/telemetry", "not JSON", garbage)));
    await(
        store.write(
            new DeadLetter(
                device,
                2_000,
                "v1/devices/me/attributes",
                "not an object",
                "[1]".getBytes(StandardCharsets.UTF_8))));

    List<StoredDeadLetter> letters = await(store.list(device, 10));

    assertThat(letters).extracting(StoredDeadLetter::receivedAt).containsExactly(2_000L, 1_000L);
    StoredDeadLetter oldest = letters.get(1);
    assertThat(oldest.deviceId()).isEqualTo(device);
    assertThat(oldest.topic()).isEqualTo("v1/devices/me/telemetry");
    assertThat(oldest.reason()).isEqualTo("not JSON");
    assertThat(oldest.payload()).containsExactly(garbage);
    assertThat(oldest.id().version()).isEqualTo(1);
    assertThat(await(store.list(device, 1))).hasSize(1);
    assertThat(await(store.list(DeviceId.random(), 10))).isEmpty();
  }

  @Test
  void should_give_rows_the_configured_ttl_when_written() {
    DeviceId device = DeviceId.random();

    await(store.write(new DeadLetter(device, 1_000, "t", "r", new byte[] {1})));

    int ttl =
        session
            .execute(
                "SELECT TTL(topic) FROM " + keyspace + ".dead_letters WHERE device_id = ?",
                device.value())
            .one()
            .getInt(0);
    assertThat(ttl).isBetween(7 * 86_400 - 60, 7 * 86_400);
  }
}
