package io.fieldline.server.ws;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The WebSocket API's bounds that need no server: config, keys per command, sizes, permits. */
class WsBoundsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String DEVICE = "7a9c2f5e-4b1d-4c3e-9f1a-2b3c4d5e6f70";

  private static WsConfig read(String hocon, long maxHeap) {
    return WsConfig.from(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve(), maxHeap);
  }

  private static WsCommand.Batch parse(String keys, int maxKeys) throws Exception {
    return WsCommand.parse(
        JSON.readTree(
            "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":7,\"entityId\":\""
                + DEVICE
                + "\",\"keys\":"
                + keys
                + "}]}"),
        maxKeys);
  }

  @Test
  void should_take_a_share_of_the_heap_when_no_memory_budget_is_set() {
    WsConfig defaults = read("", 1000L * 1024 * 1024);
    assertThat(defaults.memoryBudget()).isEqualTo(1000L * 1024 * 1024 / 100 * 20);
    assertThat(defaults.maxKeysPerCommand()).isEqualTo(100);
    assertThat(defaults.maxSessions()).isEqualTo(1000);
    assertThat(defaults.maxQueuedBytes()).isEqualTo(3L * 1024 * 1024);
    assertThat(read("fieldline.ws.memory-budget = 8 MiB", 1L << 40).memoryBudget())
        .isEqualTo(8L * 1024 * 1024);
  }

  @Test
  void should_refuse_a_command_when_it_names_more_keys_than_allowed() throws Exception {
    assertThat(parse("\"a,b,c\"", 3).commands()).hasSize(1);
    WsCommand.Batch tooMany = parse("\"a,b,c,d\"", 3);
    assertThat(tooMany.commands()).isEmpty();
    assertThat(tooMany.bad())
        .singleElement()
        .satisfies(
            bad -> {
              assertThat(bad.cmdId()).isEqualTo(7);
              assertThat(bad.tag()).isEqualTo("too_many_keys");
              assertThat(bad.reason()).contains("at most 3");
            });
    WsCommand.Batch tooLong = parse("[\"" + "k".repeat(256) + "\"]", 3);
    assertThat(tooLong.bad())
        .singleElement()
        .satisfies(
            bad -> {
              assertThat(bad.tag()).isEqualTo("bad_command");
              assertThat(bad.reason()).contains("255");
            });
  }

  @Test
  void should_estimate_more_for_longer_keys_and_count_utf8_bytes() throws Exception {
    WsCommand command = parse("\"ab,cde\"", 10).commands().get(0);
    assertThat(command.keyChars()).isEqualTo(5);
    assertThat(WsMemory.subscription(2, 5))
        .isEqualTo(WsMemory.SUBSCRIPTION_BYTES + 2 * WsMemory.KEY_BYTES + 20);
    assertThat(SessionOutbound.utf8Length("a")).isEqualTo(1);
    assertThat(SessionOutbound.utf8Length("é")).isEqualTo(2);
    assertThat(SessionOutbound.utf8Length("€")).isEqualTo(3);
    assertThat(SessionOutbound.utf8Length("😀")).isEqualTo(4);
  }

  @Test
  void should_refuse_what_does_not_fit_when_the_budget_is_used_up() {
    WsMemory memory = new WsMemory(400);
    assertThat(memory.tryTakeForSubscription(300)).isTrue();
    assertThat(memory.tryTakeForSubscription(1)).as("subscriptions: 3/4 at most").isFalse();
    assertThat(memory.tryTake(100)).isTrue();
    assertThat(memory.tryTake(1)).isFalse();
    memory.give(400);
    assertThat(memory.used()).isZero();
  }

  @Test
  void should_hand_a_permit_to_the_next_waiter_when_one_is_given_back() {
    ReadPermits permits = new ReadPermits(2);
    assertThat(permits.acquire().toCompletableFuture()).isDone();
    assertThat(permits.acquire().toCompletableFuture()).isDone();
    List<CompletionStage<Void>> waiting = new ArrayList<>();
    waiting.add(permits.acquire());
    waiting.add(permits.acquire());
    assertThat(waiting.get(0).toCompletableFuture()).isNotDone();
    permits.release();
    assertThat(waiting.get(0).toCompletableFuture()).isDone();
    assertThat(waiting.get(1).toCompletableFuture()).isNotDone();
    permits.close();
    assertThat(waiting.get(1).toCompletableFuture()).isDone();
  }
}
