package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.server.ThingsBoardSdk;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's own gateway client ({@code TBGatewayMqttClient} of {@code tb-mqtt-client} from
 * PyPI, the library the ThingsBoard IoT Gateway is built on), unmodified, against a real server: it
 * connects over MQTT 5 and subscribes to the gateway topics, connects a child with a type, sends
 * telemetry and attributes for two children and disconnects one, every message acknowledged and
 * stored; and through its own callbacks it receives a shared attribute set over REST and a two-way
 * RPC for a child, answers the RPC (the REST caller gets the answer) and reads the child's shared
 * attribute back. The SDK is the one {@link ThingsBoardSdk} installs, at its pinned version.
 */
class GatewaySdkIT extends GatewayTestBase {

  // Exits 0 once every message is acknowledged (PUBACK), 1 when one is not within 30 s.
  private static final String SCRIPT =
      """
      import sys, time
      from tb_gateway_mqtt import TBGatewayMqttClient

      host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
      gateway = TBGatewayMqttClient(host, port=port, username=token, client_id="sdk-gateway")
      gateway.connect()
      deadline = time.time() + 30
      while not gateway.is_connected() and time.time() < deadline:
          time.sleep(0.05)
      print("connected", gateway.is_connected(), flush=True)

      def acknowledged(info):
          infos = info.message_info if isinstance(info.message_info, list) else [info.message_info]
          deadline = time.time() + 30
          while time.time() < deadline:
              if all(i.is_published() for i in infos):
                  return True
              time.sleep(0.05)
          return False

      steps = [
          ("connect", lambda: gateway.gw_connect_device("sdk-child-1", "sensor")),
          ("telemetry", lambda: gateway.gw_send_telemetry(
              "sdk-child-1", {"ts": 1700000000000, "values": {"temperature": 42.5}})),
          ("telemetry", lambda: gateway.gw_send_telemetry("sdk-child-2", {"humidity": 40})),
          ("attributes", lambda: gateway.gw_send_attributes("sdk-child-1", {"firmware": "1.0.1"})),
          ("disconnect", lambda: gateway.gw_disconnect_device("sdk-child-1")),
      ]
      for name, step in steps:
          ok = acknowledged(step())
          print(name, "acknowledged" if ok else "NOT acknowledged", flush=True)
          if not ok:
              sys.exit(1)
      gateway.disconnect()
      """;

  // Prints "ready" once connected, subscribed and its child connected; then waits (at most 60 s)
  // for a shared attribute and an RPC of the child through its callbacks, answers the RPC, reads
  // the attribute back and exits 0 (1 when something did not come).
  private static final String DOWNLINK_SCRIPT =
      """
      import json, sys, time
      from tb_gateway_mqtt import TBGatewayMqttClient

      host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
      child = "sdk-down-child"
      seen = {"rpc": False, "attribute": False, "answer": None}

      def on_rpc(client, content):
          data = content["data"]
          print("rpc", content["device"], data["method"], json.dumps(data["params"]), flush=True)
          client.gw_send_rpc_reply(content["device"], data["id"], {"echo": data["params"]})
          seen["rpc"] = True

      def on_attribute(content):
          print("attribute", json.dumps(content, sort_keys=True), flush=True)
          seen["attribute"] = True

      def on_answer(content, error):
          print("answer", json.dumps(content, sort_keys=True), error, flush=True)
          seen["answer"] = content

      def wait(condition, seconds):
          deadline = time.time() + seconds
          while not condition() and time.time() < deadline:
              time.sleep(0.05)
          return condition()

      gateway = TBGatewayMqttClient(host, port=port, username=token, client_id="sdk-downlink")
      gateway.gw_set_server_side_rpc_request_handler(on_rpc)
      gateway.connect()
      wait(gateway.is_connected, 30)
      wait(lambda: not gateway.get_subscriptions_in_progress(), 30)
      info = gateway.gw_connect_device(child, "sensor")
      infos = info.message_info if isinstance(info.message_info, list) else [info.message_info]
      wait(lambda: all(i.is_published() for i in infos), 30)
      gateway.gw_subscribe_to_attribute(child, "target", on_attribute)
      print("ready", flush=True)

      ok = wait(lambda: seen["rpc"] and seen["attribute"], 60)
      gateway.gw_request_shared_attributes(child, ["target"], on_answer)
      ok = wait(lambda: seen["answer"] is not None, 30) and ok
      gateway.disconnect()
      sys.exit(0 if ok else 1)
      """;

  @Test
  void should_serve_thingsboards_unmodified_gateway_client() throws Exception {
    UUID gateway = createDevice("sdk-gateway", "sdk-gateway-token", true);
    Path python = ThingsBoardSdk.python();
    Path script = Files.createTempFile("gateway_smoke", ".py");
    Files.writeString(script, SCRIPT);

    Result run =
        run(
            List.of(
                python.toString(),
                script.toString(),
                "127.0.0.1",
                String.valueOf(mqttPort()),
                "sdk-gateway-token"),
            120);

    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output()).contains("connected True").doesNotContain("NOT acknowledged");
    Map<String, JsonNode> children = listed("sdk-child-");
    assertThat(children).containsOnlyKeys("sdk-child-1", "sdk-child-2");
    assertThat(children.get("sdk-child-1").get("type").asText()).isEqualTo("sensor");
    for (JsonNode child : children.values()) {
      assertThat(child.at("/additionalInfo/lastConnectedGateway").asText())
          .isEqualTo(gateway.toString());
    }
    Map<UUID, Map<String, Integer>> rows = rowCounts();
    assertThat(rows.get(id(children.get("sdk-child-1")))).containsEntry("temperature", 1);
    assertThat(rows.get(id(children.get("sdk-child-2")))).containsEntry("humidity", 1);
    JsonNode attributes =
        ok(
            get(
                "/api/plugins/telemetry/DEVICE/"
                    + id(children.get("sdk-child-1"))
                    + "/values/attributes/CLIENT_SCOPE"));
    assertThat(attributes.get(0).get("key").asText()).isEqualTo("firmware");
    assertThat(attributes.get(0).get("value").asText()).isEqualTo("1.0.1");
  }

  @Test
  void should_deliver_a_childs_rpc_and_shared_attribute_to_thingsboards_gateway_client()
      throws Exception {
    createDevice("sdk-down-gateway", "sdk-down-gateway-token", true);
    Path python = ThingsBoardSdk.python();
    Path script = Files.createTempFile("gateway_downlink", ".py");
    Files.writeString(script, DOWNLINK_SCRIPT);
    Path log = Files.createTempFile("gateway_downlink", ".log");
    Process process =
        new ProcessBuilder(
                python.toString(),
                script.toString(),
                "127.0.0.1",
                String.valueOf(mqttPort()),
                "sdk-down-gateway-token")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.readString(log).contains("ready") || !process.isAlive());
      assertThat(Files.readString(log)).contains("ready");
      UUID child = deviceId("sdk-down-child");

      ok(
          post(
              "/api/plugins/telemetry/DEVICE/" + child + "/attributes/SHARED_SCOPE",
              "{\"target\":23}"));
      HttpResponse<String> answer =
          post(
              "/api/rpc/twoway/" + child,
              "{\"method\":\"getTemperature\",\"params\":{\"unit\":\"C\"},\"timeout\":10000}");

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(json(answer)).isEqualTo(JSON.readTree("{\"echo\":{\"unit\":\"C\"}}"));
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(Files.readString(log)).isTrue();
      String output = Files.readString(log);
      assertThat(process.exitValue()).as(output).isZero();
      assertThat(output)
          .contains("rpc sdk-down-child getTemperature {\"unit\": \"C\"}")
          .contains("attribute {\"data\": {\"target\": 23}, \"device\": \"sdk-down-child\"}")
          .containsPattern(
              "answer \\{\"device\": \"sdk-down-child\", \"id\": \\d+, \"value\": 23\\} None");
    } finally {
      process.destroyForcibly();
    }
  }

  private static UUID id(JsonNode device) {
    return UUID.fromString(device.at("/id/id").asText());
  }

  private record Result(int exitCode, String output) {}

  private static Result run(List<String> command, long timeoutSeconds)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("process", ".log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return new Result(-1, "timed out: " + command + "\n" + Files.readString(log));
    }
    return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }
}
