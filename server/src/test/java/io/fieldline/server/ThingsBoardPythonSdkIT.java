package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.device.Device;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's Python device SDK ({@code tb-mqtt-client} from PyPI, the library ThingsBoard's docs
 * give device makers), unmodified, against a real Fieldline server: it speaks MQTT 5, subscribes to
 * the attribute and RPC topics, asks for its session limits and publishes at QoS 1. {@link
 * ThingsBoardSdk} installs the SDK into a virtual environment under {@code target/} the first time
 * (PyPI is one of the registries the build may use).
 */
class ThingsBoardPythonSdkIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void should_serve_the_unmodified_thingsboard_python_sdk_over_mqtt5() throws Exception {
    Device device = createDevice("python-sdk", "python-sdk-token");
    Path python = ThingsBoardSdk.python();
    Path script = Files.createTempFile("device_smoke", ".py");
    try (InputStream in = getClass().getResourceAsStream("/thingsboard-sdk/device_smoke.py")) {
      Files.write(script, in.readAllBytes());
    }

    Result run =
        run(
            List.of(
                python.toString(),
                script.toString(),
                "127.0.0.1",
                String.valueOf(mqttPort()),
                "python-sdk-token",
                "20"),
            120);

    assertThat(run.exitCode()).as(run.output()).isZero();
    // MQTT 5, and the in-flight limit the SDK applied comes from our Receive Maximum / session
    // limits (100, which the SDK takes 80 % of).
    assertThat(run.output()).contains("protocol=5").contains("max_inflight=80");
    assertThat(rows(device)).isEqualTo(20);
  }

  /**
   * The SDK's two-way API unmodified: attribute request (client and shared), client-side RPC, a
   * shared attribute set over REST pushed to its attribute callback, a server-side RPC answered by
   * its RPC handler, the answer being the REST call's body.
   */
  @Test
  void should_serve_the_thingsboard_python_sdks_two_way_api() throws Exception {
    Device device = createDevice("python-sdk-two-way", "python-sdk-two-way-token");
    String token = adminToken();
    String attributes = "/api/plugins/telemetry/DEVICE/" + device.id() + "/attributes/SHARED_SCOPE";
    assertThat(post(attributes, token, "{\"targetTemp\":21.5}").statusCode()).isEqualTo(200);
    Path python = ThingsBoardSdk.python();
    Path script = Files.createTempFile("device_two_way", ".py");
    try (InputStream in = getClass().getResourceAsStream("/thingsboard-sdk/device_two_way.py")) {
      Files.write(script, in.readAllBytes());
    }
    Path log = Files.createTempFile("device_two_way", ".log");
    Process process =
        new ProcessBuilder(
                python.toString(),
                script.toString(),
                "127.0.0.1",
                String.valueOf(mqttPort()),
                "python-sdk-two-way-token")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      await("the SDK's ready line")
          .atMost(Duration.ofSeconds(60))
          .failFast(() -> !process.isAlive())
          .until(() -> Files.readString(log).contains("ready"));

      assertThat(post(attributes, token, "{\"mode\":\"eco\"}").statusCode()).isEqualTo(200);
      HttpResponse<String> answer =
          post(
              "/api/rpc/twoway/" + device.id(),
              token,
              "{\"method\":\"setMode\",\"params\":{\"mode\":\"eco\"},\"timeout\":10000}");

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(JSON.readTree(answer.body()))
          .isEqualTo(JSON.readTree("{\"answeredBy\":\"tb-sdk\",\"echo\":{\"mode\":\"eco\"}}"));
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      String output = Files.readString(log, StandardCharsets.UTF_8);
      assertThat(process.exitValue()).as(output).isZero();
      assertThat(output)
          .contains(
              "attributes {\"client\": {\"serial\": \"SDK-1\"}, \"shared\": {\"targetTemp\":"
                  + " 21.5}}")
          .contains("push {\"mode\": \"eco\"}")
          .contains("rpc {\"method\": \"setMode\", \"params\": {\"mode\": \"eco\"}}")
          .containsPattern("time \\{\"currentTime\": \\d{13}\\}");
    } finally {
      process.destroyForcibly();
    }
  }

  private String adminToken() throws IOException {
    String body = "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}";
    return JSON.readTree(post("/api/auth/login", null, body).body()).get("token").asText();
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
