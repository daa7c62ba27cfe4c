package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's device credential calls against a real server: GET and POST of each type, creating
 * a device with credentials, the 400/401/404/409 answers, the password never returned, and a
 * replaced token closing the device's open session. The certificates are test fixtures made with
 * {@code openssl req -x509 -newkey ec}; their fingerprints are what {@code openssl x509
 * -fingerprint -sha256} prints.
 */
class CredentialsRestIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String CERT_A_SHA256 =
      "b2696423b7b5b02409b37cfbdabe9863151ec3725c337d098a0f90dc9537af13";

  private String token;

  @Override
  protected Map<String, Object> overrides() {
    // bcrypt's lowest cost: the tests check behaviour, not cost.
    return Map.of("fieldline.cassandra.password-hashing.cost", 4);
  }

  @BeforeAll
  void login() throws IOException {
    HttpResponse<String> response =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    token = JSON.readTree(response.body()).get("token").asText();
  }

  private static String pem(String name) {
    try (InputStream in =
        CredentialsRestIT.class.getResourceAsStream("/certificates/" + name + ".pem")) {
      return new String(Objects.requireNonNull(in).readAllBytes(), StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private JsonNode credentialsOf(Device device) throws IOException {
    HttpResponse<String> response = get("/api/device/" + device.id() + "/credentials", token);
    assertThat(response.statusCode()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private static String body(
      DeviceId device, String type, String credentialsId, String credentialsValue) {
    ObjectNode node = JSON.createObjectNode();
    node.putObject("deviceId").put("entityType", "DEVICE").put("id", device.toString());
    node.put("credentialsType", type);
    node.put("credentialsId", credentialsId);
    node.put("credentialsValue", credentialsValue);
    return node.toString();
  }

  private static String basicValue(String clientId, String userName, String password) {
    ObjectNode value = JSON.createObjectNode();
    value.put("clientId", clientId);
    value.put("userName", userName);
    value.put("password", password);
    return value.toString();
  }

  private HttpResponse<String> postCredentials(String body) {
    return post("/api/device/credentials", token, body);
  }

  private Optional<Device> basicLogin(String clientId, String userName, String password) {
    return server
        .registry()
        .findByBasicCredentials(
            new MqttBasicLogin(clientId, userName, password.getBytes(StandardCharsets.UTF_8)))
        .toCompletableFuture()
        .join();
  }

  private Optional<Device> byToken(String accessToken) {
    return server.registry().findByToken(accessToken).toCompletableFuture().join();
  }

  @Test
  void should_show_an_access_token_in_thingsboards_shape() throws IOException {
    Device device = createDevice("cred-token", "cred-token-1");

    JsonNode credentials = credentialsOf(device);

    assertThat(credentials.at("/id/id").asText()).isEqualTo(device.id().toString());
    assertThat(credentials.at("/deviceId/entityType").asText()).isEqualTo("DEVICE");
    assertThat(credentials.at("/deviceId/id").asText()).isEqualTo(device.id().toString());
    assertThat(credentials.get("createdTime").asLong()).isEqualTo(device.createdTime());
    assertThat(credentials.get("credentialsType").asText()).isEqualTo("ACCESS_TOKEN");
    assertThat(credentials.get("credentialsId").asText()).isEqualTo("cred-token-1");
    assertThat(credentials.get("credentialsValue").isNull()).isTrue();
  }

  @Test
  void should_replace_a_token_by_basic_credentials_and_never_return_the_password()
      throws IOException {
    Device device = createDevice("cred-basic", "cred-basic-token");

    HttpResponse<String> replaced =
        postCredentials(
            body(device.id(), "MQTT_BASIC", "", basicValue("client-b", "user-b", "pass-b-123")));

    assertThat(replaced.statusCode()).isEqualTo(200);
    assertThat(replaced.body()).doesNotContain("pass-b-123");
    JsonNode credentials = credentialsOf(device);
    assertThat(credentials.toString()).doesNotContain("pass-b-123").doesNotContain("$2b$");
    assertThat(credentials.get("credentialsType").asText()).isEqualTo("MQTT_BASIC");
    assertThat(credentials.get("credentialsId").asText()).matches("[0-9a-f]{64}");
    JsonNode value = JSON.readTree(credentials.get("credentialsValue").asText());
    assertThat(value.get("clientId").asText()).isEqualTo("client-b");
    assertThat(value.get("userName").asText()).isEqualTo("user-b");
    assertThat(value.get("password").isNull()).isTrue();
    assertThat(basicLogin("client-b", "user-b", "pass-b-123"))
        .map(Device::id)
        .contains(device.id());
    assertThat(basicLogin("client-b", "user-b", "wrong")).isEmpty();
    assertThat(byToken("cred-basic-token")).isEmpty();

    // Posting back what GET shows (password null) keeps the password.
    ObjectNode roundTrip = (ObjectNode) credentials;
    assertThat(postCredentials(roundTrip.toString()).statusCode()).isEqualTo(200);
    assertThat(basicLogin("client-b", "user-b", "pass-b-123"))
        .map(Device::id)
        .contains(device.id());
  }

  @Test
  void should_keep_the_password_when_what_get_shows_is_posted_back_with_other_ids()
      throws IOException {
    Device device = createDevice("cred-rename", "cred-rename-token");
    postCredentials(
        body(device.id(), "MQTT_BASIC", "", basicValue("rename-c", "rename-u", "rename-p")));
    // ThingsBoard's edit: GET (password null), change the ids, POST the whole object back.
    ObjectNode shown = (ObjectNode) credentialsOf(device);
    ObjectNode value = (ObjectNode) JSON.readTree(shown.get("credentialsValue").asText());
    assertThat(value.get("password").isNull()).isTrue();
    value.put("clientId", "rename-c2").put("userName", "rename-u2");
    shown.put("credentialsValue", value.toString());

    assertThat(postCredentials(shown.toString()).statusCode()).isEqualTo(200);

    assertThat(basicLogin("rename-c2", "rename-u2", "any-password")).isEmpty();
    assertThat(basicLogin("rename-c2", "rename-u2", "rename-p"))
        .map(Device::id)
        .contains(device.id());
    value.remove("userName");
    shown.put("credentialsValue", value.toString());
    HttpResponse<String> withoutUser = postCredentials(shown.toString());
    assertThat(withoutUser.statusCode()).as("a kept password needs a user name").isEqualTo(400);
    assertThat(JSON.readTree(withoutUser.body()).get("message").asText()).contains("userName");
  }

  @Test
  void should_replace_by_a_certificate_and_back_to_a_token() throws IOException {
    Device device = createDevice("cred-x509", "cred-x509-token");

    HttpResponse<String> replaced =
        postCredentials(body(device.id(), "X509_CERTIFICATE", "ignored", pem("device-a")));

    assertThat(replaced.statusCode()).isEqualTo(200);
    JsonNode credentials = credentialsOf(device);
    assertThat(credentials.get("credentialsType").asText()).isEqualTo("X509_CERTIFICATE");
    assertThat(credentials.get("credentialsId").asText()).isEqualTo(CERT_A_SHA256);
    assertThat(credentials.get("credentialsValue").asText())
        .startsWith("-----BEGIN CERTIFICATE-----");
    assertThat(server.registry().findByCertificate(CERT_A_SHA256).toCompletableFuture().join())
        .map(Device::id)
        .contains(device.id());

    assertThat(
            postCredentials(body(device.id(), "ACCESS_TOKEN", "cred-x509-token-2", ""))
                .statusCode())
        .isEqualTo(200);
    assertThat(server.registry().findByCertificate(CERT_A_SHA256).toCompletableFuture().join())
        .isEmpty();
    assertThat(byToken("cred-x509-token-2")).map(Device::id).contains(device.id());
  }

  @Test
  void should_close_the_devices_session_when_its_token_is_replaced() {
    Device device = createDevice("cred-session", "cred-session-token");
    Mqtt3BlockingClient client = client("cred-session");
    client.connectWith().simpleAuth().username("cred-session-token").applySimpleAuth().send();
    assertThat(client.getState().isConnected()).isTrue();

    assertThat(
            postCredentials(body(device.id(), "ACCESS_TOKEN", "cred-session-token-2", ""))
                .statusCode())
        .isEqualTo(200);

    await().atMost(Duration.ofSeconds(10)).until(() -> !client.getState().isConnected());
  }

  @Test
  void should_create_a_device_with_credentials_in_one_call() throws IOException {
    String request =
        "{\"device\":{\"name\":\"cred-with\",\"type\":\"meter\"},\"credentials\":"
            + "{\"credentialsType\":\"MQTT_BASIC\",\"credentialsValue\":"
            + JSON.writeValueAsString(basicValue("with-client", "with-user", "with-pass"))
            + "}}";

    HttpResponse<String> created = post("/api/device-with-credentials", token, request);

    assertThat(created.statusCode()).isEqualTo(200);
    JsonNode device = JSON.readTree(created.body());
    assertThat(device.get("name").asText()).isEqualTo("cred-with");
    assertThat(device.get("type").asText()).isEqualTo("meter");
    assertThat(basicLogin("with-client", "with-user", "with-pass"))
        .map(found -> found.id().toString())
        .contains(device.at("/id/id").asText());
    assertThat(
            post("/api/device-with-credentials", token, request.replace("cred-with", "cred-with-2"))
                .statusCode())
        .as("same credentials, other name")
        .isEqualTo(409);
    assertThat(post("/api/device-with-credentials", token, "{\"device\":{}}").statusCode())
        .isEqualTo(400);
  }

  @Test
  void should_answer_409_when_another_device_holds_the_credential() {
    Device holder = createDevice("cred-holder", "cred-holder-token");
    Device other = createDevice("cred-other", "cred-other-token");
    postCredentials(body(holder.id(), "MQTT_BASIC", "", basicValue("c-409", "u-409", "p")));

    assertThat(
            postCredentials(body(other.id(), "MQTT_BASIC", "", basicValue("c-409", "u-409", "q")))
                .statusCode())
        .isEqualTo(409);
    assertThat(
            postCredentials(body(other.id(), "ACCESS_TOKEN", "cred-holder-token-x", ""))
                .statusCode())
        .isEqualTo(200);
    assertThat(
            postCredentials(body(holder.id(), "ACCESS_TOKEN", "cred-holder-token-x", ""))
                .statusCode())
        .isEqualTo(409);
    assertThat(byToken("cred-other-token")).isEmpty();
  }

  @Test
  void should_answer_400_with_a_reason_when_the_credentials_are_invalid() throws IOException {
    DeviceId id = createDevice("cred-bad", "cred-bad-token").id();

    assertBadRequest(body(id, "LWM2M_CREDENTIALS", "x", ""), "credentialsType must be one of");
    assertBadRequest(
        body(id, "MQTT_BASIC", "", basicValue("", "", "p")), "need a clientId or a userName");
    assertBadRequest(
        body(id, "MQTT_BASIC", "", "{\"clientId\":\"c\",\"password\":\"p\"}"), "needs a userName");
    assertBadRequest(body(id, "MQTT_BASIC", "", "not json"), "must be a JSON object");
    assertBadRequest(
        body(id, "MQTT_BASIC", "", basicValue("a\u0001b", "u", "p")),
        "clientId must not contain control characters");
    assertBadRequest(
        body(id, "X509_CERTIFICATE", "", "-----BEGIN CERTIFICATE-----\ngarbage\n"),
        "not a PEM certificate");
    assertBadRequest(
        body(id, "X509_CERTIFICATE", "", pem("device-a") + pem("device-b")),
        "exactly one certificate");
    assertBadRequest(body(id, "ACCESS_TOKEN", " ", ""), "access token must not be blank");
    assertBadRequest(
        "{\"deviceId\":{\"id\":\"nope\"},\"credentialsType\":\"ACCESS_TOKEN\"}",
        "deviceId.id must be a device UUID");
    assertBadRequest("[1,2]", "must be a JSON object");
    assertThat(byToken("cred-bad-token")).as("unchanged").isPresent();
  }

  @Test
  void should_refuse_the_provisioning_name_as_a_credential() throws IOException {
    Bystander bystander = new Bystander(this, "cred-provision-bystander");
    bystander.connect();
    DeviceId id = createDevice("cred-provision", "cred-provision-token").id();
    double refusedBefore =
        metric("fieldline_http_credentials_refused_total{reason=\"reserved_name\"");

    assertBadRequest(body(id, "ACCESS_TOKEN", "provision", ""), "device self-provisioning");
    bystander.publishesAndAllStored();
    assertBadRequest(
        body(id, "MQTT_BASIC", "", basicValue("c", "provision", "p")), "self-provisioning");
    assertBadRequest(
        body(id, "MQTT_BASIC", "", basicValue("provision", "u", "p")), "self-provisioning");
    HttpResponse<String> created =
        post(
            "/api/device-with-credentials",
            token,
            "{\"device\":{\"name\":\"cred-provision-2\"},\"credentials\":"
                + "{\"credentialsType\":\"ACCESS_TOKEN\",\"credentialsId\":\"provision\"}}");
    assertThat(created.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(created.body()).get("message").asText()).contains("self-provisioning");
    HttpResponse<String> saved =
        post("/api/device?accessToken=provision", token, "{\"name\":\"cred-provision-3\"}");
    assertThat(saved.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(saved.body()).get("message").asText()).contains("self-provisioning");

    assertThat(byToken("cred-provision-token")).as("unchanged").isPresent();
    assertThat(byToken("provision")).isEmpty();
    assertThat(metric("fieldline_http_credentials_refused_total{reason=\"reserved_name\""))
        .isEqualTo(refusedBefore + 5);
    bystander.publishesAndAllStored();
    bystander.disconnect();
  }

  @Test
  void should_refuse_expired_not_yet_valid_and_weak_certificates() throws Exception {
    Bystander bystander = new Bystander(this, "cred-weak-bystander");
    bystander.connect();
    DeviceId id = createDevice("cred-weak", "cred-weak-token").id();
    Instant now = Instant.now();

    assertBadRequest(
        body(
            id,
            "X509_CERTIFICATE",
            "",
            certificate(now.minus(Duration.ofDays(30)), now.minus(Duration.ofDays(1)))),
        "X509_CERTIFICATE expired at");
    assertBadRequest(
        body(
            id,
            "X509_CERTIFICATE",
            "",
            certificate(now.plus(Duration.ofDays(1)), now.plus(Duration.ofDays(30)))),
        "X509_CERTIFICATE is not valid before");
    bystander.publishesAndAllStored();
    assertBadRequest(
        body(id, "X509_CERTIFICATE", "", pem("weak-rsa1024")),
        "has an RSA key of 1024 bits; at least 2048 are required");
    assertBadRequest(body(id, "X509_CERTIFICATE", "", pem("weak-dsa")), "has a DSA key");
    assertBadRequest(
        body(id, "X509_CERTIFICATE", "", pem("weak-sha1")),
        "is signed with SHA1withRSA; MD5, MD2 and SHA-1 signatures are not accepted");
    // Ill-typed fields are refused, not read as empty.
    assertBadRequest(
        "{\"deviceId\":{\"id\":\""
            + id
            + "\"},\"credentialsType\":\"ACCESS_TOKEN\",\"credentialsId\":12345}",
        "credentialsId must be a string");
    assertBadRequest(
        "{\"deviceId\":{\"id\":\"" + id + "\"},\"credentialsType\":[\"ACCESS_TOKEN\"]}",
        "credentialsType must be one of");
    assertThat(
            post(
                    "/api/device-with-credentials",
                    token,
                    "{\"device\":{\"name\":7},\"credentials\":"
                        + "{\"credentialsType\":\"ACCESS_TOKEN\",\"credentialsId\":\"cw7\"}}")
                .body())
        .contains("device.name must be a string");

    assertThat(byToken("cred-weak-token")).as("unchanged").isPresent();
    assertThat(metric("fieldline_http_credentials_refused_total{reason=\"weak_key\""))
        .isGreaterThanOrEqualTo(2);
    // A sound certificate is still accepted.
    assertThat(
            postCredentials(
                    body(
                        id,
                        "X509_CERTIFICATE",
                        "",
                        certificate(now.minus(Duration.ofDays(1)), now.plus(Duration.ofDays(30)))))
                .statusCode())
        .isEqualTo(200);
    bystander.publishesAndAllStored();
    bystander.disconnect();
  }

  // An EC P-256 device certificate valid from notBefore to notAfter, issued by a fleet CA.
  private static String certificate(Instant notBefore, Instant notAfter) throws Exception {
    X509Bundle bundle =
        new CertificateBuilder()
            .subject("CN=validity-" + notBefore.toEpochMilli())
            .notBefore(notBefore)
            .notAfter(notAfter)
            .ecp256()
            .buildIssuedBy(TestPki.ca("CN=Validity CA"));
    return bundle.getCertificatePEM();
  }

  private void assertBadRequest(String body, String reason) throws IOException {
    HttpResponse<String> response = postCredentials(body);
    assertThat(response.statusCode()).as(body).isEqualTo(400);
    assertThat(JSON.readTree(response.body()).get("message").asText()).contains(reason);
  }

  @Test
  void should_answer_404_when_the_device_does_not_exist() {
    DeviceId unknown = DeviceId.random();

    assertThat(get("/api/device/" + unknown + "/credentials", token).statusCode()).isEqualTo(404);
    assertThat(postCredentials(body(unknown, "ACCESS_TOKEN", "ghost-token", "")).statusCode())
        .isEqualTo(404);
    assertThat(byToken("ghost-token")).isEmpty();
  }

  @Test
  void should_answer_401_without_a_valid_token() {
    Device device = createDevice("cred-401", "cred-401-token");
    String replace = body(device.id(), "ACCESS_TOKEN", "cred-401-stolen", "");

    assertThat(get("/api/device/" + device.id() + "/credentials", "garbage").statusCode())
        .isEqualTo(401);
    assertThat(post("/api/device/credentials", null, replace).statusCode()).isEqualTo(401);
    assertThat(post("/api/device/credentials", "garbage", replace).statusCode()).isEqualTo(401);
    assertThat(post("/api/device-with-credentials", null, "{}").statusCode()).isEqualTo(401);
    assertThat(byToken("cred-401-token")).isPresent();
  }
}
