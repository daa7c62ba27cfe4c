package io.fieldline.server.ota;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.device.Device;
import io.fieldline.common.ota.ChecksumAlgorithm;
import io.fieldline.server.ThingsBoardSdk;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ThingsBoard's Python device SDK ({@code tb-mqtt-client} from PyPI, pinned in {@link
 * ThingsBoardSdk}), unmodified, downloads its assigned firmware from a real Fieldline server: it
 * subscribes to {@code v2/fw/response/+}, reads the {@code fw_*} attributes with an attribute
 * request, fetches the chunks, checks the checksum itself and reports {@code fw_state}, which the
 * server keeps. Once with a chunk size, once without (an empty payload: the server's default
 * chunk). {@link ThingsBoardSdk} installs the SDK into its virtual environment under {@code
 * target/} the first time.
 */
class ThingsBoardSdkFirmwareIT extends OtaTestBase {

  @ParameterizedTest(name = "chunk size {0}")
  @ValueSource(ints = {4096, 0})
  void should_let_the_unmodified_thingsboard_sdk_download_and_verify_its_firmware(int chunk)
      throws Exception {
    byte[] firmware = randomBytes(150_000);
    String title = "sdk-fw-" + chunk;
    String packageId = createPackage(title, "3.0");
    ok(upload(packageId, "checksumAlgorithm=SHA256", firmware));
    Device device = createDevice(title, title + "-token");
    ok(
        post(
            "/api/fieldline/device/" + device.id() + "/firmware",
            admin,
            "{\"firmwareId\":" + packageRef(packageId) + "}"));
    Path python = ThingsBoardSdk.python();
    Path script = Files.createTempFile("device_firmware", ".py");
    try (InputStream in = getClass().getResourceAsStream("/thingsboard-sdk/device_firmware.py")) {
      Files.write(script, in.readAllBytes());
    }
    // The SDK's default handler would write the file into the working directory: give it one.
    Path workDir = Files.createTempDirectory("tb-sdk-firmware");

    Result run =
        run(
            List.of(
                python.toString(),
                script.toString(),
                "127.0.0.1",
                String.valueOf(mqttPort()),
                title + "-token",
                String.valueOf(chunk)),
            workDir,
            120);

    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .contains(
            "firmware "
                + title
                + " 3.0 "
                + firmware.length
                + " "
                + ChecksumAlgorithm.SHA256.of(firmware));
    JsonNode state =
        ok(
            get(
                "/api/plugins/telemetry/DEVICE/"
                    + device.id()
                    + "/values/timeseries?keys=fw_state,current_fw_version",
                admin));
    assertThat(state.at("/fw_state/0/value").asText()).isEqualTo("UPDATED");
    assertThat(state.at("/current_fw_version/0/value").asText()).isEqualTo("3.0");
  }

  private record Result(int exitCode, String output) {}

  private static Result run(List<String> command, Path workDir, long timeoutSeconds)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("process", ".log");
    Process process =
        new ProcessBuilder(command)
            .directory(workDir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return new Result(-1, "timed out: " + command + "\n" + Files.readString(log));
    }
    return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }
}
