package io.fieldline.perf.provision;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.perf.CommandLine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Creates {@code count} devices through {@code POST /api/fieldline/devices/bulk} and writes the
 * Gatling feeder {@code name,id,token}. Devices are created in chunks of {@code chunk} (chunk
 * {@code c} is named {@code <prefix>c-<i>} with token {@code <tokenPrefix>c-<i>}), each call well
 * inside the server's request timeout (a 503, a storage timeout, is retried up to 5 times); the
 * bulk call returns existing devices instead of duplicating them, so a rerun with the same
 * arguments yields the same feeder.
 *
 * <p>With {@code --gateways true} the devices are gateways instead ({@link #provisionGateways}):
 * {@code <prefix><i>} with token {@code <tokenPrefix><i>}, one {@code POST /api/device} each.
 *
 * <pre>
 * java -cp ... io.fieldline.perf.provision.DeviceProvisioner --url http://127.0.0.1:8080 \
 *   --user admin@fieldline.local --password secret --count 10000 --prefix bench- --out devices.csv
 * </pre>
 */
public final class DeviceProvisioner {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private static final int MAX_RETRIES_ON_503 = 5;

  private final URI base;

  public DeviceProvisioner(URI base) {
    this.base = base;
  }

  public static void main(String[] args) throws Exception {
    CommandLine line = CommandLine.parse(args);
    DeviceProvisioner provisioner = new DeviceProvisioner(URI.create(line.get("url")));
    String token = provisioner.login(line.get("user"), line.get("password"));
    String prefix = line.get("prefix", "bench-");
    long start = System.nanoTime();
    String tokenPrefix = line.get("token-prefix", prefix + "token-");
    int count = line.getInt("count", 10);
    boolean gateways = Boolean.parseBoolean(line.get("gateways", "false"));
    List<ProvisionedDevice> devices =
        gateways
            ? provisioner.provisionGateways(token, prefix, tokenPrefix, count)
            : provisioner.provision(token, prefix, tokenPrefix, count, line.getInt("chunk", 1000));
    Path out = Path.of(line.get("out"));
    writeFeeder(out, devices);
    System.out.printf(
        "provisioned %d %s in %.1f s -> %s%n",
        devices.size(), gateways ? "gateways" : "devices", (System.nanoTime() - start) / 1e9, out);
  }

  /** Logs in and returns the access token for the {@code X-Authorization} header. */
  public String login(String username, String password) throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode().put("username", username).put("password", password);
    JsonNode reply = post("/api/auth/login", null, body);
    return reply.path("token").asText();
  }

  /** Creates (or finds) the devices, in order. */
  public List<ProvisionedDevice> provision(
      String authToken, String namePrefix, String tokenPrefix, int count, int chunk)
      throws IOException, InterruptedException {
    if (count < 1 || chunk < 1) {
      throw new IllegalArgumentException("count and chunk must be positive");
    }
    List<ProvisionedDevice> devices = new ArrayList<>(count);
    for (int c = 0; c * chunk < count; c++) {
      int size = Math.min(chunk, count - c * chunk);
      ObjectNode body =
          JSON.createObjectNode()
              .put("namePrefix", namePrefix + c + "-")
              .put("tokenPrefix", tokenPrefix + c + "-")
              .put("type", "load-test")
              .put("count", size);
      JsonNode reply = post("/api/fieldline/devices/bulk", authToken, body);
      for (JsonNode device : reply) {
        devices.add(
            new ProvisionedDevice(
                device.path("name").asText(),
                device.path("id").asText(),
                device.path("accessToken").asText()));
      }
    }
    return devices;
  }

  /**
   * Creates (or finds) {@code count} gateway devices, in order: {@code namePrefix + i} with access
   * token {@code tokenPrefix + i}, type {@code gateway} and {@code "additionalInfo":
   * {"gateway":true}} (ThingsBoard's "Is gateway"), one {@code POST /api/device?accessToken=} each.
   * A name already taken (409, a rerun) is looked up by name and kept with the token asked for.
   */
  public List<ProvisionedDevice> provisionGateways(
      String authToken, String namePrefix, String tokenPrefix, int count)
      throws IOException, InterruptedException {
    if (count < 1) {
      throw new IllegalArgumentException("count must be positive");
    }
    List<ProvisionedDevice> gateways = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      String name = namePrefix + i;
      String accessToken = tokenPrefix + i;
      ObjectNode body = JSON.createObjectNode().put("name", name).put("type", "gateway");
      body.putObject("additionalInfo").put("gateway", true);
      HttpResponse<String> response =
          send(
              "/api/device?accessToken=" + encode(accessToken),
              authToken,
              HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
      String id;
      if (response.statusCode() == 409) {
        id =
            findDevice(authToken, name)
                .orElseThrow(() -> new IOException("gateway " + name + ": 409, yet not found"));
      } else if (response.statusCode() == 200) {
        id = JSON.readTree(response.body()).path("id").path("id").asText();
      } else {
        throw new IOException(
            "POST /api/device answered " + response.statusCode() + ": " + response.body());
      }
      gateways.add(new ProvisionedDevice(name, id, accessToken));
    }
    return gateways;
  }

  /**
   * The id of the device named {@code name} ({@code GET /api/tenant/devices?deviceName=}), empty
   * when there is none (404).
   */
  public Optional<String> findDevice(String authToken, String name)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(base.resolve("/api/tenant/devices?deviceName=" + encode(name)))
            .timeout(Duration.ofSeconds(30))
            .header("X-Authorization", "Bearer " + authToken)
            .GET()
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() == 404) {
      return Optional.empty();
    }
    if (response.statusCode() != 200) {
      throw new IOException(
          "GET /api/tenant/devices?deviceName="
              + name
              + " answered "
              + response.statusCode()
              + ": "
              + response.body());
    }
    return Optional.of(JSON.readTree(response.body()).path("id").path("id").asText());
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  /** Writes the feeder: a {@code name,id,token} header, then one device per line. */
  public static void writeFeeder(Path file, List<ProvisionedDevice> devices) {
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        out.write("name,id,token\n");
        for (ProvisionedDevice device : devices) {
          out.write(device.name() + "," + device.id() + "," + device.token() + "\n");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads a feeder written by {@link #writeFeeder}. */
  public static List<ProvisionedDevice> readFeeder(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      List<ProvisionedDevice> devices = new ArrayList<>(lines.size());
      for (String line : lines.subList(1, lines.size())) {
        if (line.isBlank()) {
          continue;
        }
        String[] parts = line.split(",", -1);
        devices.add(new ProvisionedDevice(parts[0], parts[1], parts[2]));
      }
      return devices;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private JsonNode post(String path, @Nullable String authToken, JsonNode body)
      throws IOException, InterruptedException {
    HttpResponse<String> response =
        send(path, authToken, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    if (response.statusCode() != 200) {
      throw new IOException(
          "POST " + path + " answered " + response.statusCode() + ": " + response.body());
    }
    return JSON.readTree(response.body());
  }

  /** POSTs {@code body}; a 503 (a storage timeout) is retried a few times before it is answered. */
  private HttpResponse<String> send(
      String path, @Nullable String authToken, HttpRequest.BodyPublisher body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(base.resolve(path))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", "application/json")
            .POST(body);
    if (authToken != null) {
      request.header("X-Authorization", "Bearer " + authToken);
    }
    HttpResponse<String> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    // 503 is the server's answer to a storage timeout (a cold Cassandra right after start, say):
    // the calls are rerunnable, so try again a few times before giving up.
    for (int retry = 1; response.statusCode() == 503 && retry <= MAX_RETRIES_ON_503; retry++) {
      System.err.printf(
          "POST %s answered 503, retry %d of %d in %d s%n", path, retry, MAX_RETRIES_ON_503, retry);
      Thread.sleep(1000L * retry);
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
    return response;
  }
}
