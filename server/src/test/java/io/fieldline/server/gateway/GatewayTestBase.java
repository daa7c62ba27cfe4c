package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.cql.Row;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.server.ServerTestBase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;

/**
 * The gateway ITs' server ({@link ServerTestBase}: the module's shared Cassandra child JVM, the
 * shared keyspace emptied, free ports of 127.0.0.1), with the administrator logged in over REST.
 */
abstract class GatewayTestBase extends ServerTestBase {

  protected static final ObjectMapper JSON = new ObjectMapper();

  protected String adminToken;

  @BeforeAll
  void logIn() {
    HttpResponse<String> login =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(login.statusCode()).as(login.body()).isEqualTo(200);
    adminToken = json(login).get("token").asText();
  }

  /**
   * Creates a device over REST, as ThingsBoard's UI does: {@code POST /api/device?accessToken=}
   * with {@code additionalInfo.gateway = true} when {@code gateway}.
   *
   * @return the device's id
   */
  protected UUID createDevice(String name, String token, boolean gateway) {
    String body =
        "{\"name\":\""
            + name
            + "\",\"type\":\""
            + (gateway ? "gateway" : "default")
            + "\""
            + (gateway ? ",\"additionalInfo\":{\"gateway\":true,\"description\":\"it\"}" : "")
            + "}";
    JsonNode device = ok(post("/api/device?accessToken=" + token, body));
    return UUID.fromString(device.at("/id/id").asText());
  }

  /**
   * An administrator's link of {@code device} to {@code gateway}: the device saved over REST with
   * {@code additionalInfo.ownerGateway}, its other fields and keys kept.
   */
  protected void linkToGateway(UUID device, UUID gateway) {
    ObjectNode saved = (ObjectNode) ok(get("/api/device/" + device));
    JsonNode info = saved.get("additionalInfo");
    ObjectNode linked =
        info != null && info.isObject() ? (ObjectNode) info : JSON.createObjectNode();
    linked.put("ownerGateway", gateway.toString());
    saved.set("additionalInfo", linked);
    ok(post("/api/device", saved.toString()));
  }

  /** Every device of the listing whose name starts with {@code prefix}, by name. */
  protected Map<String, JsonNode> listed(String prefix) {
    JsonNode page = ok(get("/api/tenant/devices?pageSize=1000&page=0&textSearch=" + prefix));
    Map<String, JsonNode> byName = new HashMap<>();
    for (JsonNode device : page.get("data")) {
      if (device.get("name").asText().startsWith(prefix)) {
        byName.put(device.get("name").asText(), device);
      }
    }
    return byName;
  }

  /** Every row of {@code ts_kv} for {@code key}: device id → the rows' (ts, long value). */
  protected Map<UUID, List<long[]>> rows(String key) {
    Map<UUID, List<long[]>> rows = new HashMap<>();
    for (Row row : cql.execute("SELECT device_id, key, ts, long_v FROM ts_kv")) {
      if (key.equals(row.getString("key"))) {
        rows.computeIfAbsent(row.getUuid("device_id"), id -> new ArrayList<>())
            .add(new long[] {row.getLong("ts"), row.getLong("long_v")});
      }
    }
    return rows;
  }

  /** How many rows of {@code ts_kv} each device has, by key. */
  protected Map<UUID, Map<String, Integer>> rowCounts() {
    Map<UUID, Map<String, Integer>> counts = new HashMap<>();
    for (Row row : cql.execute("SELECT device_id, key FROM ts_kv")) {
      counts
          .computeIfAbsent(row.getUuid("device_id"), id -> new HashMap<>())
          .merge(row.getString("key"), 1, Integer::sum);
    }
    return counts;
  }

  protected HttpResponse<String> get(String path) {
    return send("GET", path, adminToken, null);
  }

  protected HttpResponse<String> post(String path, String body) {
    return send("POST", path, adminToken, body);
  }

  protected HttpResponse<String> delete(String path) {
    return send("DELETE", path, adminToken, null);
  }

  /** The id of the device named {@code name}, found over REST. */
  protected UUID deviceId(String name) {
    JsonNode device =
        ok(
            get(
                "/api/tenant/devices?deviceName="
                    + URLEncoder.encode(name, StandardCharsets.UTF_8)));
    return UUID.fromString(device.at("/id/id").asText());
  }

  protected static JsonNode ok(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return json(response);
  }

  protected static JsonNode json(HttpResponse<String> response) {
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private HttpResponse<String> send(String method, String path, String token, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri(path))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      request.header("X-Authorization", "Bearer " + token);
    }
    return send(request);
  }
}
