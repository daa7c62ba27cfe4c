package io.fieldline.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkNodeStatus;
import io.fieldline.export.sink.InvalidSinkException;
import io.fieldline.export.sink.SinkFactory;
import io.fieldline.export.sink.webhook.WebhookSinkFactory;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Sink administration: what is refused, what is kept secret, replays, the summed status. */
class ExportAdminTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final MemorySinks sinks = new MemorySinks();
  private final MemoryFeed feed = new MemoryFeed();
  private final AtomicInteger changes = new AtomicInteger();
  private final ExportAdmin admin =
      new ExportAdmin(
          sinks,
          feed,
          Map.<String, SinkFactory>of("WEBHOOK", new WebhookSinkFactory()),
          2,
          changes::incrementAndGet);

  private static ObjectNode webhook(String secret) {
    ObjectNode configuration = JSON.createObjectNode();
    configuration.put("url", "https://receiver.example.com/in");
    if (secret != null) {
      configuration.put("secret", secret);
    }
    return configuration;
  }

  private SinkView create(String name) {
    return admin
        .create(
            new SinkDraft(name, "WEBHOOK", JSON.createObjectNode(), webhook("0123456789abcdef")))
        .toCompletableFuture()
        .join();
  }

  private static Throwable cause(Runnable call) {
    try {
      call.run();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("no failure");
  }

  @Test
  void should_keep_the_secret_out_of_every_answer_and_keep_it_when_an_update_leaves_it_out() {
    SinkView created = create("hook");
    assertThat(created.configuration().has("secret")).isFalse();
    assertThat(changes.get()).as("the exporter is told").isPositive();

    admin
        .update(
            created.id(),
            new SinkDraft("hook-2", "WEBHOOK", JSON.createObjectNode(), webhook(null)))
        .toCompletableFuture()
        .join();

    SinkDefinition stored = sinks.definitions.get(created.id());
    assertThat(stored.name()).isEqualTo("hook-2");
    assertThat(stored.configurationJson()).contains("0123456789abcdef");
  }

  @Test
  void should_refuse_an_unknown_type_a_bad_filter_a_bad_name_and_one_sink_too_many() {
    assertThat(
            cause(
                () ->
                    admin
                        .create(
                            new SinkDraft(
                                "x", "MQTT", JSON.createObjectNode(), webhook("0123456789abcdef")))
                        .toCompletableFuture()
                        .join()))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("type must be one of WEBHOOK");
    ObjectNode filter = JSON.createObjectNode();
    filter.putArray("kinds").add("EVENTS");
    assertThat(
            cause(
                () ->
                    admin
                        .create(new SinkDraft("x", "WEBHOOK", filter, webhook("0123456789abcdef")))
                        .toCompletableFuture()
                        .join()))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("filter.kinds");
    assertThat(
            cause(
                () ->
                    admin
                        .create(
                            new SinkDraft(
                                " ",
                                "WEBHOOK",
                                JSON.createObjectNode(),
                                webhook("0123456789abcdef")))
                        .toCompletableFuture()
                        .join()))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("name");
    create("one");
    create("two");
    assertThatThrownBy(() -> create("three"))
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("at most 2 sinks");
  }

  @Test
  void should_start_a_new_generation_from_the_time_when_replayed() {
    SinkView created = create("replayed");
    admin.replay(created.id(), 1_700_000_000_000L).toCompletableFuture().join();
    SinkDefinition stored = sinks.definitions.get(created.id());
    assertThat(stored.generation()).isEqualTo(1);
    assertThat(stored.replayFrom()).isEqualTo(1_700_000_000_000L);
    assertThat(cause(() -> admin.replay(created.id(), -1).toCompletableFuture().join()))
        .isInstanceOf(InvalidSinkException.class);
  }

  @Test
  void should_sum_the_nodes_reports_and_leave_a_silent_nodes_lag_out() {
    SinkView created = create("summed");
    long now = System.currentTimeMillis();
    sinks.saveStatus(
        new SinkNodeStatus(created.id(), "n1", "RUNNING", 100, 5, now - 2_000, null, 0, now));
    sinks.saveStatus(
        new SinkNodeStatus(
            created.id(), "n2", "RETRYING", 50, 7, now - 9_000, "HTTP 503: busy", now - 500, now));
    sinks.saveStatus(
        new SinkNodeStatus(
            created.id(), "gone", "RUNNING", 30, 1_000, now - 60_000, null, 0, now - 120_000));

    SinkStatus status = admin.get(created.id()).toCompletableFuture().join().orElseThrow().status();

    assertThat(status.delivered()).as("every node's, the silent one's too").isEqualTo(180);
    assertThat(status.lagRecords()).as("only the nodes that still report").isEqualTo(12);
    assertThat(status.lagMs()).isBetween(9_000L, 15_000L);
    assertThat(status.state()).isEqualTo("RETRYING");
    assertThat(status.lastError()).isEqualTo("HTTP 503: busy");
  }
}
