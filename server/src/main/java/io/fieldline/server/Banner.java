package io.fieldline.server;

import io.fieldline.common.device.Device;

/** The start-up summary printed to the console. */
final class Banner {

  private Banner() {}

  static String render(FieldlineServer server) {
    StringBuilder out = new StringBuilder();
    out.append("\n  Fieldline is ready.\n\n");
    out.append("  MQTT     mqtt://127.0.0.1:").append(server.mqttPort()).append('\n');
    if (server.mqttTlsPort() > 0) {
      out.append("  MQTTS    mqtts://127.0.0.1:").append(server.mqttTlsPort()).append('\n');
    }
    out.append("  Console  http://127.0.0.1:").append(server.httpPort()).append("/\n");
    out.append("  HTTP     http://127.0.0.1:")
        .append(server.httpPort())
        .append("   (health: /health/ready, metrics: /metrics)\n");
    out.append("  Login    ")
        .append(server.adminUsername())
        .append(" / ")
        .append(server.adminPassword())
        .append('\n');
    server
        .cluster()
        .ifPresent(
            node ->
                out.append("  Cluster  node ")
                    .append(node.nodeId())
                    .append(", gRPC :")
                    .append(node.grpcPort())
                    .append(", ring ")
                    .append(node.view().ring().nodes())
                    .append('\n'));
    server
        .embeddedCassandra()
        .ifPresent(
            node -> out.append("  Cassandra (embedded) ").append(node.cqlAddress()).append('\n'));
    server.demoDevice().ifPresent(device -> appendDemo(out, server, device));
    out.append("\n  Ctrl-C stops Fieldline")
        .append(server.embeddedCassandra().isPresent() ? " and its Cassandra.\n" : ".\n");
    return out.toString();
  }

  private static void appendDemo(StringBuilder out, FieldlineServer server, Device device) {
    out.append("\n  Demo device ")
        .append(device.name())
        .append(" (id ")
        .append(device.id())
        .append("), publish with:\n\n    mosquitto_pub -h 127.0.0.1 -p ")
        .append(server.mqttPort())
        .append(" -u ")
        .append(device.accessToken())
        .append(" -q 1 -t v1/devices/me/telemetry -m '{\"temperature\":21.5,\"humidity\":40}'\n");
  }
}
