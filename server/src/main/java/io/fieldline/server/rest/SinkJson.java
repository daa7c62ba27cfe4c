package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.export.SinkDraft;
import io.fieldline.export.SinkStatus;
import io.fieldline.export.SinkView;
import java.util.List;
import java.util.Map;

/**
 * The JSON of {@code /api/fieldline/sinks} (docs/rest-api.md, "Export sinks"): a sink as a request
 * describes it ({@link SinkDraft}), as an answer shows it ({@link SinkView}, secrets already left
 * out by the export module), and its dead letters. Whether a definition makes sense (a known type,
 * a reachable Kafka, a valid URL) is the export module's to say; this class checks the shape only.
 * Stateless.
 */
final class SinkJson {

  private SinkJson() {}

  /**
   * The sink a create or update body describes: {@code name} and {@code type} strings, {@code
   * filter} and {@code configuration} objects ({@code {}} when absent or null). Other fields (an
   * {@code id}, {@code status} or {@code paused} posted back from a read) are ignored.
   *
   * @throws IllegalArgumentException (400) for any other shape
   */
  static SinkDraft draft(String body) {
    JsonNode json = HttpJson.parseObject(body);
    String name = RequestParams.name("name", text(json, "name").trim());
    String type = text(json, "type").trim();
    if (type.isEmpty()) {
      throw new IllegalArgumentException("type must be KAFKA or WEBHOOK");
    }
    return new SinkDraft(name, type, object(json, "filter"), object(json, "configuration"));
  }

  /**
   * The {@code fromTs} of a replay: the query parameter when given, else the body's {@code fromTs}.
   *
   * @throws IllegalArgumentException (400) when neither is an integer in the timestamp range
   */
  static long fromTs(Map<String, String> params, String body) {
    if (params.containsKey("fromTs")) {
      return RequestParams.timestamp(params, "fromTs", null);
    }
    if (body.isBlank()) {
      throw new IllegalArgumentException(
          "fromTs is required: ?fromTs=<epoch ms> or a body {\"fromTs\":<epoch ms>}");
    }
    JsonNode fromTs = HttpJson.parseObject(body).path("fromTs");
    if (!fromTs.isIntegralNumber()
        || !fromTs.canConvertToLong()
        || fromTs.longValue() < RequestParams.MIN_TS
        || fromTs.longValue() > RequestParams.MAX_TS) {
      throw new IllegalArgumentException(
          "fromTs must be an integer in " + RequestParams.MIN_TS + ".." + RequestParams.MAX_TS);
    }
    return fromTs.longValue();
  }

  /**
   * {@code {"id","name","type","filter","configuration","paused","createdTime","updatedTime",
   * "status":{"state","delivered","lagRecords","lagMs","lastError","lastErrorTime"}}}.
   */
  static ObjectNode view(SinkView sink) {
    ObjectNode node = JsonViews.MAPPER.createObjectNode();
    node.put("id", sink.id().toString());
    node.put("name", sink.name());
    node.put("type", sink.type());
    node.set("filter", sink.filter().deepCopy());
    node.set("configuration", sink.configuration().deepCopy());
    node.put("paused", sink.paused());
    node.put("createdTime", sink.createdTime());
    node.put("updatedTime", sink.updatedTime());
    SinkStatus status = sink.status();
    ObjectNode statusNode = node.putObject("status");
    statusNode.put("state", status.state());
    statusNode.put("delivered", status.delivered());
    statusNode.put("lagRecords", status.lagRecords());
    statusNode.put("lagMs", status.lagMs());
    statusNode.put("lastError", status.lastError());
    statusNode.put("lastErrorTime", status.lastErrorTime());
    return node;
  }

  static ArrayNode views(List<SinkView> sinks) {
    ArrayNode array = JsonViews.MAPPER.createArrayNode();
    sinks.forEach(sink -> array.add(view(sink)));
    return array;
  }

  /** {@code [{"id","createdTime","records","status","error","body"}]}, the body as a string. */
  static ArrayNode deadLetters(List<SinkDeadLetter> letters) {
    ArrayNode array = JsonViews.MAPPER.createArrayNode();
    for (SinkDeadLetter letter : letters) {
      ObjectNode node = array.addObject();
      node.put("id", letter.id().toString());
      node.put("createdTime", letter.createdTime());
      node.put("records", letter.records());
      node.put("status", letter.status());
      node.put("error", letter.error());
      node.put("body", letter.body());
    }
    return array;
  }

  private static String text(JsonNode json, String field) {
    JsonNode value = json.path(field);
    if (!value.isTextual()) {
      throw new IllegalArgumentException(field + " is required and must be a string");
    }
    return value.textValue();
  }

  private static ObjectNode object(JsonNode json, String field) {
    JsonNode value = json.path(field);
    if (value.isMissingNode() || value.isNull()) {
      return JsonViews.MAPPER.createObjectNode();
    }
    if (!value.isObject()) {
      throw new IllegalArgumentException(field + " must be a JSON object");
    }
    return ((ObjectNode) value).deepCopy();
  }
}
