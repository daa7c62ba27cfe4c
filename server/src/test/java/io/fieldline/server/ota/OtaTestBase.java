package io.fieldline.server.ota;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.server.ServerTestBase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;

/**
 * A real server called over REST as the administrator, with the OTA calls the tests share: create a
 * package, upload its file as a hand-built {@code multipart/form-data} body (the JDK's HttpClient
 * has no multipart support: the framing of RFC 7578 is written here, the parsing is Pekko's).
 */
abstract class OtaTestBase extends ServerTestBase {

  protected static final ObjectMapper JSON = new ObjectMapper();
  private static final String BOUNDARY = "fieldline-ota-test-boundary-7d1f";

  protected String admin;
  protected final Random random = new Random(42);

  @BeforeAll
  void login() {
    HttpResponse<String> response =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(response.statusCode()).isEqualTo(200);
    admin = json(response).get("token").asText();
  }

  protected byte[] randomBytes(int size) {
    byte[] data = new byte[size];
    random.nextBytes(data);
    return data;
  }

  /** Creates a firmware package; returns its id. */
  protected String createPackage(String title, String version) {
    JsonNode created =
        ok(
            post(
                "/api/otaPackage",
                admin,
                "{\"title\":\""
                    + title
                    + "\",\"version\":\""
                    + version
                    + "\",\"type\":\"FIRMWARE\",\"tag\":\""
                    + title
                    + " "
                    + version
                    + "\"}"));
    assertThat(created.at("/id/entityType").asText()).isEqualTo("OTA_PACKAGE");
    assertThat(created.get("hasData").asBoolean()).isFalse();
    return created.at("/id/id").asText();
  }

  /** Uploads {@code data} as the package's file; {@code query} is the part after {@code ?}. */
  protected HttpResponse<String> upload(String packageId, String query, byte[] data) {
    byte[] head =
        ("--"
                + BOUNDARY
                + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"firmware.bin\""
                + "\r\nContent-Type: application/octet-stream\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] tail = ("\r\n--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.US_ASCII);
    return send(
        HttpRequest.newBuilder(uri("/api/otaPackage/" + packageId + "?" + query))
            .header("X-Authorization", "Bearer " + admin)
            .header("Content-Type", "multipart/form-data; boundary=" + BOUNDARY)
            .POST(HttpRequest.BodyPublishers.ofByteArrays(List.of(head, data, tail))));
  }

  protected HttpResponse<byte[]> getBytes(String path, String token) {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).GET();
    if (token != null) {
      request.header("X-Authorization", "Bearer " + token);
    }
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  protected HttpResponse<String> delete(String path) {
    return send(
        HttpRequest.newBuilder(uri(path)).header("X-Authorization", "Bearer " + admin).DELETE());
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

  /** Asserts ThingsBoard's error body with {@code status}; returns its message. */
  protected static String error(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode body = json(response);
    assertThat(body.get("status").asInt()).isEqualTo(status);
    return body.get("message").asText();
  }

  /** {@code {"entityType":"OTA_PACKAGE","id":..}} as request JSON. */
  protected static String packageRef(String packageId) {
    return "{\"entityType\":\"OTA_PACKAGE\",\"id\":\"" + packageId + "\"}";
  }
}
