package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.Device;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's Python device SDK ({@code tb-mqtt-client} from PyPI, the library ThingsBoard's docs
 * give device makers), unmodified, against a real Fieldline server: it speaks MQTT 5, subscribes to
 * the attribute and RPC topics, asks for its session limits and publishes at QoS 1. The SDK is
 * installed into a virtual environment under {@code target/} the first time (PyPI is one of the
 * registries the build may use); the pinned version is the one the issue was reported with.
 */
class ThingsBoardPythonSdkIT extends ServerTestBase {

  private static final String SDK = "tb-mqtt-client==1.13.14";
  private static final Path VENV = Path.of("target", "thingsboard-sdk-venv");

  @Test
  void should_serve_the_unmodified_thingsboard_python_sdk_over_mqtt5() throws Exception {
    Device device = createDevice("python-sdk", "python-sdk-token");
    Path python = virtualEnvironment();
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

  private static Path virtualEnvironment() throws IOException, InterruptedException {
    Path python = VENV.resolve("bin").resolve("python");
    if (!Files.isExecutable(python)) {
      Result created = run(List.of("python3", "-m", "venv", VENV.toString()), 120);
      assertThat(created.exitCode()).as(created.output()).isZero();
    }
    Result installed = run(List.of(python.toString(), "-m", "pip", "install", "--quiet", SDK), 300);
    assertThat(installed.exitCode()).as(installed.output()).isZero();
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
