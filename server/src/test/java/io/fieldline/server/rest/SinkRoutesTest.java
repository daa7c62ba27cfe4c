package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.export.SinkStatus;
import io.fieldline.export.SinkView;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code /api/fieldline/sinks} over real HTTP against an in-memory {@code SinkAdmin}: every path,
 * the JSON of a sink and of its dead letters, and the 400/404/503 answers in ThingsBoard's error
 * body. The bearer check in front of them is {@code AuthRoutesIT}'s.
 */
class SinkRoutesTest extends RoutesTestBase {

  private static final String SINKS = "/api/fieldline/sinks";

  private final InMemorySinks sinks = new InMemorySinks();

  @Override
  Route routes() {
    return new SinkRoutes(sinks).routes();
  }

  private static String body(String name, String type) {
    return "{\"name\":\""
        + name
        + "\",\"type\":\""
        + type
        + "\",\"filter\":{\"keys\":[\"temperature\"]},"
        + "\"configuration\":{\"url\":\"https://example.com/in\",\"secret\":\"s3cret\"}}";
  }

  private static JsonNode ok(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return json(response);
  }

  @Test
  void should_answer_the_sink_with_its_status_and_without_secrets_when_one_is_created() {
    JsonNode created = ok(post(SINKS, body("hook-created", "WEBHOOK")));

    UUID id = UUID.fromString(created.get("id").asText());
    assertThat(created.get("name").asText()).isEqualTo("hook-created");
    assertThat(created.get("type").asText()).isEqualTo("WEBHOOK");
    assertThat(created.get("filter").toString()).isEqualTo("{\"keys\":[\"temperature\"]}");
    assertThat(created.get("configuration").toString())
        .isEqualTo("{\"url\":\"https://example.com/in\"}");
    assertThat(created.get("paused").asBoolean()).isFalse();
    assertThat(created.get("createdTime").asLong()).isPositive();
    assertThat(created.get("updatedTime").asLong()).isEqualTo(created.get("createdTime").asLong());
    assertThat(created.get("status").toString())
        .isEqualTo(
            "{\"state\":\"RUNNING\",\"delivered\":0,\"lagRecords\":0,\"lagMs\":0,"
                + "\"lastError\":null,\"lastErrorTime\":0}");
    assertThat(sinks.stored(id)).isPresent();
    assertThat(ok(get(SINKS + "/" + id))).isEqualTo(created);
  }

  @Test
  void should_list_every_sink_with_its_status_when_the_collection_is_read() {
    SinkView first = sinks.add("list-a");
    SinkView second = sinks.add("list-b");
    sinks.status(
        second.id(), new SinkStatus("RETRYING", 42, 7, 9_500, "502 Bad Gateway", 123_456L));

    JsonNode list = ok(get(SINKS));

    assertThat(list.isArray()).isTrue();
    JsonNode a = find(list, first.id());
    JsonNode b = find(list, second.id());
    assertThat(a.at("/status/state").asText()).isEqualTo("RUNNING");
    assertThat(b.get("status").toString())
        .isEqualTo(
            "{\"state\":\"RETRYING\",\"delivered\":42,\"lagRecords\":7,\"lagMs\":9500,"
                + "\"lastError\":\"502 Bad Gateway\",\"lastErrorTime\":123456}");
  }

  private static JsonNode find(JsonNode list, UUID id) {
    for (JsonNode sink : list) {
      if (sink.get("id").asText().equals(id.toString())) {
        return sink;
      }
    }
    throw new AssertionError(id + " not in " + list);
  }

  @Test
  void should_replace_name_filter_and_configuration_when_a_sink_is_put() {
    SinkView sink = sinks.add("put-before");

    JsonNode updated =
        ok(
            put(
                SINKS + "/" + sink.id(),
                "{\"id\":\"ignored\",\"name\":\"put-after\",\"type\":\"WEBHOOK\","
                    + "\"filter\":{\"kinds\":[\"ATTRIBUTES\"]},"
                    + "\"configuration\":{\"url\":\"https://example.com/2\"},\"paused\":true}"));

    assertThat(updated.get("id").asText()).isEqualTo(sink.id().toString());
    assertThat(updated.get("name").asText()).isEqualTo("put-after");
    assertThat(updated.get("filter").toString()).isEqualTo("{\"kinds\":[\"ATTRIBUTES\"]}");
    assertThat(updated.at("/configuration/url").asText()).isEqualTo("https://example.com/2");
    assertThat(updated.get("paused").asBoolean()).as("paused only by /pause").isFalse();
    assertThat(updated.get("updatedTime").asLong()).isGreaterThan(sink.updatedTime());
    assertThat(sinks.stored(sink.id()).orElseThrow().name()).isEqualTo("put-after");
  }

  @Test
  void should_take_an_empty_filter_and_configuration_when_they_are_left_out_or_null() {
    JsonNode created =
        ok(post(SINKS, "{\"name\":\"no-filter\",\"type\":\"KAFKA\",\"filter\":null}"));

    assertThat(created.get("filter").toString()).isEqualTo("{}");
    assertThat(created.get("configuration").toString()).isEqualTo("{}");
  }

  @Test
  void should_delete_a_sink_and_answer_404_for_it_afterwards() {
    SinkView sink = sinks.add("delete-me");

    assertThat(ok(delete(SINKS + "/" + sink.id())).toString()).isEqualTo("{}");

    assertThat(sinks.stored(sink.id())).isEmpty();
    assertNotFound(get(SINKS + "/" + sink.id()));
    assertNotFound(delete(SINKS + "/" + sink.id()));
  }

  @Test
  void should_pause_and_resume_a_sink_when_asked() {
    SinkView sink = sinks.add("pause-me");

    JsonNode paused = ok(post(SINKS + "/" + sink.id() + "/pause", ""));
    assertThat(paused.get("paused").asBoolean()).isTrue();
    assertThat(paused.at("/status/state").asText()).isEqualTo("PAUSED");
    assertThat(sinks.stored(sink.id()).orElseThrow().paused()).isTrue();

    JsonNode resumed = ok(post(SINKS + "/" + sink.id() + "/resume", ""));
    assertThat(resumed.get("paused").asBoolean()).isFalse();
    assertThat(sinks.stored(sink.id()).orElseThrow().paused()).isFalse();
  }

  @Test
  void should_replay_from_the_query_parameter_or_else_from_the_body() {
    SinkView sink = sinks.add("replay-me");
    String replay = SINKS + "/" + sink.id() + "/replay";

    assertThat(ok(post(replay + "?fromTs=1700000000000", "")).get("id").asText())
        .isEqualTo(sink.id().toString());
    assertThat(sinks.lastReplayFrom).isEqualTo(1_700_000_000_000L);

    ok(post(replay, "{\"fromTs\":0}"));
    assertThat(sinks.lastReplayFrom).isZero();

    ok(post(replay + "?fromTs=5", "{\"fromTs\":6}"));
    assertThat(sinks.lastReplayFrom).isEqualTo(5);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "|",
        "|{}",
        "|{\"fromTs\":-1}",
        "|{\"fromTs\":\"5\"}",
        "|{\"fromTs\":1.5}",
        "|{\"fromTs\":null}",
        "|[5]",
        "|not json",
        "?fromTs=-1|",
        "?fromTs=soon|",
        "?fromTs=|{\"fromTs\":5}",
      })
  void should_answer_400_and_not_replay_when_from_ts_is_missing_or_negative(String request) {
    SinkView sink = sinks.add("replay-bad-" + UUID.randomUUID());
    sinks.lastReplayFrom = -1;
    String[] parts = request.split("\\|", -1);

    assertBadRequest(post(SINKS + "/" + sink.id() + "/replay" + parts[0], parts[1]));
    assertThat(sinks.lastReplayFrom).isEqualTo(-1);
  }

  @Test
  void should_answer_the_newest_dead_letters_up_to_the_limit_when_they_are_read() {
    SinkView sink = sinks.add("letters");
    SinkDeadLetter older = sinks.addDeadLetter(sink.id(), 1);
    SinkDeadLetter newer = sinks.addDeadLetter(sink.id(), 2);

    JsonNode all = ok(get(SINKS + "/" + sink.id() + "/deadLetters"));
    assertThat(sinks.lastDeadLetterLimit).isEqualTo(100);
    assertThat(all).hasSize(2);
    assertThat(all.get(0).toString())
        .isEqualTo(
            "{\"id\":\""
                + newer.id()
                + "\",\"createdTime\":2002,\"records\":2,\"status\":400,"
                + "\"error\":\"refused 2\",\"body\":\"[{\\\"seq\\\":2}]\"}");
    assertThat(all.get(1).get("id").asText()).isEqualTo(older.id().toString());

    JsonNode one = ok(get(SINKS + "/" + sink.id() + "/deadLetters?limit=1"));
    assertThat(sinks.lastDeadLetterLimit).isEqualTo(1);
    assertThat(one).hasSize(1);
    ok(get(SINKS + "/" + sink.id() + "/deadLetters?limit=1000"));
    assertThat(sinks.lastDeadLetterLimit).isEqualTo(1000);
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "-1", "1001", "many", ""})
  void should_answer_400_when_the_dead_letter_limit_is_out_of_range(String limit) {
    SinkView sink = sinks.add("letters-limit-" + UUID.randomUUID());

    assertBadRequest(get(SINKS + "/" + sink.id() + "/deadLetters?limit=" + limit));
  }

  /** Every call on one sink: its method and what follows the sink's id in the path. */
  static Stream<Arguments> callsOnOneSink() {
    return Stream.of(
        Arguments.of("GET", ""),
        Arguments.of("PUT", ""),
        Arguments.of("DELETE", ""),
        Arguments.of("POST", "/pause"),
        Arguments.of("POST", "/resume"),
        Arguments.of("POST", "/replay?fromTs=1"),
        Arguments.of("GET", "/deadLetters"));
  }

  @ParameterizedTest
  @MethodSource("callsOnOneSink")
  void should_answer_404_when_the_sink_is_unknown(String method, String suffix) {
    assertNotFound(send(method, SINKS + "/" + UUID.randomUUID() + suffix));
  }

  @ParameterizedTest
  @MethodSource("callsOnOneSink")
  void should_answer_400_when_the_sink_id_is_not_a_uuid(String method, String suffix) {
    for (String id : new String[] {"not-a-uuid", "1-1-1-1-1", UUID.randomUUID() + "0"}) {
      HttpResponse<String> answer = send(method, SINKS + "/" + id + suffix);
      assertBadRequest(answer);
      assertThat(json(answer).get("message").asText()).isEqualTo("sink id must be a UUID");
    }
  }

  /** Sends a valid sink body with every PUT and POST (pause, resume and a replay ignore it). */
  private HttpResponse<String> send(String method, String path) {
    String body = body("unused-" + UUID.randomUUID(), "KAFKA");
    return switch (method) {
      case "GET" -> get(path);
      case "PUT" -> put(path, body);
      case "DELETE" -> delete(path);
      default -> post(path, body);
    };
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "not json",
        "[]",
        "\"sink\"",
        "{\"type\":\"KAFKA\"}",
        "{\"name\":7,\"type\":\"KAFKA\"}",
        "{\"name\":\"  \",\"type\":\"KAFKA\"}",
        "{\"name\":\"a\\u0007b\",\"type\":\"KAFKA\"}",
        "{\"name\":\"no-type\"}",
        "{\"name\":\"blank-type\",\"type\":\" \"}",
        "{\"name\":\"type-number\",\"type\":1}",
        "{\"name\":\"bad-filter\",\"type\":\"KAFKA\",\"filter\":[]}",
        "{\"name\":\"bad-configuration\",\"type\":\"KAFKA\",\"configuration\":\"x\"}",
      })
  void should_answer_400_and_store_nothing_when_a_body_is_malformed(String body) {
    SinkView existing = sinks.add("malformed-target-" + UUID.randomUUID());

    assertBadRequest(post(SINKS, body));
    assertBadRequest(put(SINKS + "/" + existing.id(), body));
    assertThat(sinks.stored(existing.id())).contains(existing);
  }

  @Test
  void should_answer_400_with_the_export_modules_reason_when_it_refuses_the_sink() {
    SinkView taken = sinks.add("taken-name");
    SinkView other = sinks.add("other-name");

    HttpResponse<String> badType = post(SINKS, body("ftp-sink", "FTP"));
    assertBadRequest(badType);
    assertThat(json(badType).get("message").asText()).isEqualTo("unknown sink type FTP");

    HttpResponse<String> nameTaken = post(SINKS, body("taken-name", "KAFKA"));
    assertBadRequest(nameTaken);
    assertThat(json(nameTaken).get("message").asText())
        .isEqualTo("a sink named 'taken-name' already exists");

    assertBadRequest(put(SINKS + "/" + other.id(), body(taken.name(), "WEBHOOK")));
    assertThat(sinks.stored(other.id())).contains(other);
  }

  @Test
  void should_answer_503_when_storage_fails() {
    SinkView sink = sinks.add("storage-down");
    sinks.failing = true;
    try {
      assertError(get(SINKS), 503, 2);
      assertError(get(SINKS + "/" + sink.id()), 503, 2);
      assertError(post(SINKS, body("while-down", "KAFKA")), 503, 2);
      assertError(post(SINKS + "/" + sink.id() + "/pause", ""), 503, 2);
    } finally {
      sinks.failing = false;
    }
  }
}
