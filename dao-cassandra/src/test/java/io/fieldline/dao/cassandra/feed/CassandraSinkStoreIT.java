package io.fieldline.dao.cassandra.feed;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.uuid.Uuids;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkNameTakenException;
import io.fieldline.common.feed.SinkNodeStatus;
import io.fieldline.dao.cassandra.CassandraTestBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Sinks, their names, statuses and dead letters against the real Cassandra. */
class CassandraSinkStoreIT extends CassandraTestBase {

  private CassandraSinkStore store;

  @BeforeAll
  void createStore() {
    store = new CassandraSinkStore(session, keyspace, config.writeConsistency());
  }

  private static SinkDefinition sink(UUID id, String name) {
    return new SinkDefinition(
        id,
        name,
        "WEBHOOK",
        "{\"keys\":[\"t\"]}",
        "{\"url\":\"http://127.0.0.1:1/hook\",\"secret\":\"s3cret\"}",
        false,
        1_000,
        2_000,
        0,
        0);
  }

  private static SinkDefinition renamed(SinkDefinition sink, String name) {
    return new SinkDefinition(
        sink.id(),
        name,
        sink.type(),
        sink.filterJson(),
        sink.configurationJson(),
        sink.paused(),
        sink.createdTime(),
        sink.updatedTime() + 1,
        sink.replayFrom(),
        sink.generation());
  }

  private void assertNameTaken(SinkDefinition sink) {
    CompletableFuture<Void> saved = store.save(sink).toCompletableFuture();
    assertThat(saved)
        .failsWithin(TIMEOUT)
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOf(SinkNameTakenException.class)
        .withMessageContaining(sink.name());
  }

  @Test
  void should_read_back_a_saved_sink_until_it_is_deleted() {
    SinkDefinition a = sink(UUID.randomUUID(), "crud-a");
    SinkDefinition b =
        new SinkDefinition(
            UUID.randomUUID(), "crud-b", "KAFKA", "{}", "{\"topic\":\"x\"}", true, 5, 6, 7, 2);

    await(store.save(a));
    await(store.save(b));

    assertThat(await(store.sink(a.id()))).contains(a);
    assertThat(await(store.sink(b.id()))).contains(b);
    assertThat(await(store.sinks())).contains(a, b);
    assertThat(await(store.sink(UUID.randomUUID()))).isEmpty();

    SinkDefinition paused =
        new SinkDefinition(
            a.id(), a.name(), a.type(), "{}", a.configurationJson(), true, 1_000, 3_000, 2_500, 1);
    await(store.save(paused));
    assertThat(await(store.sink(a.id()))).as("saved again under its own name").contains(paused);

    assertThat(await(store.delete(a.id()))).isTrue();
    assertThat(await(store.sink(a.id()))).isEmpty();
    assertThat(await(store.sinks())).contains(b).doesNotContain(paused);
    assertThat(await(store.delete(a.id()))).as("already gone").isFalse();
  }

  @Test
  void should_refuse_a_name_with_sink_name_taken_when_another_sink_has_it() {
    SinkDefinition first = sink(UUID.randomUUID(), "names-shared");
    SinkDefinition second = sink(UUID.randomUUID(), "names-shared");
    await(store.save(first));

    assertNameTaken(second);

    assertThat(await(store.sink(second.id()))).isEmpty();
    assertThat(await(store.sink(first.id()))).contains(first);
  }

  @Test
  void should_free_the_old_name_when_a_sink_is_renamed_or_deleted() {
    SinkDefinition first = sink(UUID.randomUUID(), "rename-old");
    SinkDefinition second = sink(UUID.randomUUID(), "rename-old");
    await(store.save(first));
    SinkDefinition firstRenamed = renamed(first, "rename-new");

    await(store.save(firstRenamed));

    assertThat(await(store.sink(first.id()))).contains(firstRenamed);
    await(store.save(second)); // the old name is free
    assertNameTaken(renamed(second, "rename-new"));

    await(store.delete(firstRenamed.id()));
    await(store.save(renamed(second, "rename-new")));
    assertThat(await(store.sink(second.id())).map(SinkDefinition::name)).contains("rename-new");
    await(store.save(sink(UUID.randomUUID(), "rename-old")));
  }

  @Test
  void should_give_a_name_to_exactly_one_when_two_sinks_claim_it_at_once() {
    for (int round = 0; round < 5; round++) {
      String name = "race-" + round;
      CompletableFuture<Void> a = store.save(sink(UUID.randomUUID(), name)).toCompletableFuture();
      CompletableFuture<Void> b = store.save(sink(UUID.randomUUID(), name)).toCompletableFuture();
      List<Boolean> saved = new ArrayList<>();
      for (CompletableFuture<Void> save : List.of(a, b)) {
        try {
          save.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
          saved.add(true);
        } catch (ExecutionException e) {
          assertThat(e.getCause()).isInstanceOf(SinkNameTakenException.class);
          saved.add(false);
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }
      assertThat(saved).as("round %d", round).containsExactlyInAnyOrder(true, false);
      assertThat(await(store.sinks()).stream().filter(s -> s.name().equals(name))).hasSize(1);
    }
  }

  private static SinkNodeStatus status(UUID sink, String node, long delivered, String error) {
    return new SinkNodeStatus(
        sink,
        node,
        error == null ? "RUNNING" : "RETRYING",
        delivered,
        3,
        1_500,
        error,
        1_400,
        2_000);
  }

  @Test
  void should_keep_each_nodes_latest_status_until_statuses_are_deleted() {
    UUID sink = UUID.randomUUID();
    UUID other = UUID.randomUUID();
    SinkNodeStatus a = status(sink, "node-a", 10, null);
    SinkNodeStatus b = status(sink, "node-b", 20, "HTTP 503 from the receiver");
    await(store.saveStatus(a));
    await(store.saveStatus(b));
    await(store.saveStatus(status(other, "node-a", 1, null)));

    assertThat(await(store.statuses(sink))).containsExactlyInAnyOrder(a, b);

    SinkNodeStatus aLater = status(sink, "node-a", 15, "timeout");
    await(store.saveStatus(aLater));
    assertThat(await(store.statuses(sink))).containsExactlyInAnyOrder(aLater, b);

    await(store.deleteStatuses(sink));
    assertThat(await(store.statuses(sink))).isEmpty();
    assertThat(await(store.statuses(other))).hasSize(1);
  }

  private static SinkDeadLetter letter(UUID sink, UUID id, int n) {
    return new SinkDeadLetter(
        sink, id, 1_000 + n, n, 400, "bad request " + n, "[{\"n\":" + n + "}]");
  }

  @Test
  void should_list_dead_letters_newest_first_up_to_the_limit() {
    UUID sink = UUID.randomUUID();
    List<SinkDeadLetter> letters = new ArrayList<>();
    for (int n = 0; n < 5; n++) {
      SinkDeadLetter letter = letter(sink, Uuids.timeBased(), n);
      letters.add(letter);
      await(store.addDeadLetter(letter));
    }

    assertThat(await(store.deadLetters(sink, 3)))
        .containsExactly(letters.get(4), letters.get(3), letters.get(2));
    assertThat(await(store.deadLetters(sink, 100)))
        .containsExactly(
            letters.get(4), letters.get(3), letters.get(2), letters.get(1), letters.get(0));
    assertThat(await(store.deadLetters(UUID.randomUUID(), 10))).isEmpty();
  }

  @Test
  void should_store_a_dead_letter_under_a_time_based_id_when_given_another_kind() {
    UUID sink = UUID.randomUUID();
    await(store.addDeadLetter(letter(sink, Uuids.timeBased(), 1)));
    await(store.addDeadLetter(letter(sink, UUID.randomUUID(), 2)));

    List<SinkDeadLetter> read = await(store.deadLetters(sink, 10));
    assertThat(read).extracting(SinkDeadLetter::records).containsExactly(2, 1);
    assertThat(read.get(0).id().version()).isEqualTo(1);
  }

  @Test
  void should_delete_statuses_and_dead_letters_with_the_sink() {
    SinkDefinition sink = sink(UUID.randomUUID(), "with-extras");
    await(store.save(sink));
    await(store.saveStatus(status(sink.id(), "node-a", 1, null)));
    await(store.addDeadLetter(letter(sink.id(), Uuids.timeBased(), 1)));

    assertThat(await(store.delete(sink.id()))).isTrue();

    assertThat(await(store.statuses(sink.id()))).isEmpty();
    assertThat(await(store.deadLetters(sink.id(), 10))).isEmpty();
    assertThat(await(store.sink(sink.id()))).isEqualTo(Optional.empty());
    await(store.save(sink(UUID.randomUUID(), "with-extras"))); // its name is free
  }
}
