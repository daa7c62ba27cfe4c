package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's own gateway client ({@code TBGatewayMqttClient} of {@code tb-mqtt-client} from
 * PyPI, the library the ThingsBoard IoT Gateway is built on), unmodified, against a real server: it
 * connects over MQTT 5, subscribes to the gateway topics (refused: not served yet, which it logs
 * and survives), connects a child with a type, sends telemetry and attributes for two children and
 * disconnects one; every message is acknowledged and stored. The SDK is installed into the virtual
 * environment {@code ThingsBoardPythonSdkIT} uses, at the same pinned version.
 */
class GatewaySdkIT extends GatewayTestBase {

  private static final String SDK = "tb-mqtt-client==1.13.14";
  private static final Path VENV = Path.of("target", "thingsboard-sdk-venv");

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

  @Test
  void should_serve_thingsboards_unmodified_gateway_client() throws Exception {
    UUID gateway = createDevice("sdk-gateway", "sdk-gateway-token", true);
    Path python = virtualEnvironment();
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

  private static UUID id(JsonNode device) {
    return UUID.fromString(device.at("/id/id").asText());
  }

  private static Path virtualEnvironment() throws IOException, InterruptedException {
    Path python = VENV.resolve("bin").resolve("python");
    if (!Files.isExecutable(python)) {
      Result created = run(List.of("python3", "-m", "venv", VENV.toString()), 120);
      assertThat(created.exitCode()).as(created.output()).isZero();
    }
    Result present = run(List.of(python.toString(), "-c", "import tb_gateway_mqtt"), 60);
    if (present.exitCode() != 0) {
      Result install = run(List.of(python.toString(), "-m", "pip", "install", "--quiet", SDK), 300);
      assertThat(install.exitCode()).as(install.output()).isZero();
    }
    return python;
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
