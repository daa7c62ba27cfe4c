package io.fieldline.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A node of the cluster as it registered itself in ZooKeeper: its id and the {@code host:port} of
 * its MQTT, HTTP and gRPC listeners. The znode's data is this record as JSON, for example {@code
 * {"nodeId":"n1","mqtt":"10.0.0.5:1883","http":"10.0.0.5:8080","grpc":"10.0.0.5:9090"}}.
 *
 * @param nodeId unique node id, the ring's key
 * @param mqtt where devices reach the node's MQTT listener
 * @param http where clients reach its REST API
 * @param grpc where other nodes reach its gRPC listener
 */
public record Member(String nodeId, String mqtt, String http, String grpc) {

  private static final ObjectMapper JSON = new ObjectMapper();

  public Member {
    Objects.requireNonNull(nodeId, "nodeId");
    Objects.requireNonNull(mqtt, "mqtt");
    Objects.requireNonNull(http, "http");
    Objects.requireNonNull(grpc, "grpc");
  }

  /** The gRPC host (the part of {@link #grpc} before the last colon). */
  public String grpcHost() {
    int colon = grpc.lastIndexOf(':');
    return colon < 0 ? grpc : grpc.substring(0, colon);
  }

  /**
   * The gRPC port (after the last colon).
   *
   * @throws IllegalArgumentException if {@link #grpc} has no valid port
   */
  public int grpcPort() {
    int colon = grpc.lastIndexOf(':');
    try {
      int port = Integer.parseInt(grpc.substring(colon + 1));
      if (colon > 0 && port > 0 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("no gRPC port in '" + grpc + "'");
  }

  /** The znode payload. */
  public byte[] toJson() {
    ObjectNode node = JSON.createObjectNode();
    node.put("nodeId", nodeId);
    node.put("mqtt", mqtt);
    node.put("http", http);
    node.put("grpc", grpc);
    return node.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Parses a znode payload.
   *
   * @throws IllegalArgumentException if it is not a member's JSON
   */
  public static Member fromJson(byte[] json) {
    try {
      JsonNode node = JSON.readTree(json);
      if (node == null || !node.isObject()) {
        throw new IllegalArgumentException("not a JSON object");
      }
      Member member =
          new Member(
              text(node, "nodeId"), text(node, "mqtt"), text(node, "http"), text(node, "grpc"));
      member.grpcPort();
      return member;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("invalid member JSON: " + e.getOriginalMessage(), e);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("invalid member JSON: " + e.getMessage(), e);
    }
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual() || value.asText().isEmpty()) {
      throw new IllegalArgumentException("member JSON lacks '" + field + "'");
    }
    return value.asText();
  }
}
