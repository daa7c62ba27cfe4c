package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.export.SinkDraft;
import io.fieldline.export.SinkView;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * The web console in a real browser: Debian's chromium, driven through Debian's chromedriver by
 * Selenium (both paths given, so Selenium Manager never looks for or downloads a driver), against a
 * real server. A user logs in through the form, creates a device, reads its token from the page, a
 * real MQTT client publishes with it and the value appears on the device page without a reload (the
 * WebSocket API). Screenshots of each test's last state, and of the pages on a phone-sized and a
 * desktop window, go to {@code target/console-screenshots/}.
 */
class ConsoleBrowserIT extends RestTestBase {

  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
  private static final Dimension PHONE = new Dimension(390, 844);
  private static final Dimension DESKTOP = new Dimension(1280, 1100);
  private static final Duration PATIENCE = Duration.ofSeconds(20);
  private static final String TELEMETRY = "v1/devices/me/telemetry";

  private ChromeDriverService service;
  private ChromeDriver browser;

  @BeforeAll
  void startBrowser() throws IOException {
    assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
        .as(
            "ConsoleBrowserIT drives Debian's chromium (%s) through its chromedriver (%s), and one"
                + " of them is missing: .ci/run installs them, or run"
                + " `apt-get install -y chromium chromium-driver`",
            CHROMIUM, CHROMEDRIVER)
        .isTrue();
    Files.createDirectories(SCREENSHOTS);
    // The driver named by its system property and the browser by its binary: Selenium then has
    // nothing to look up (its Builder is not used here: javac warns about its @AutoService).
    System.setProperty(ChromeDriverService.CHROME_DRIVER_EXE_PROPERTY, CHROMEDRIVER.toString());
    service = ChromeDriverService.createDefaultService();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    options.addArguments(
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu");
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability(ChromeOptions.LOGGING_PREFS, logs);
    browser = new ChromeDriver(service, options);
    browser.manage().window().setSize(PHONE);
  }

  @AfterAll
  void stopBrowser() {
    if (browser != null) {
      browser.quit();
    }
    if (service != null) {
      service.stop();
    }
  }

  /** A new session: no token in this origin's sessionStorage, phone-sized window. */
  @BeforeEach
  void forgetSession() {
    browser.get(url("/console/info"));
    browser.executeScript("sessionStorage.clear()");
    browser.manage().window().setSize(PHONE);
  }

  /** Keeps the last state of each test, and fails it on any error in the browser's console. */
  @AfterEach
  void screenshotAndConsole(TestInfo test) throws IOException {
    screenshot(test.getTestMethod().orElseThrow().getName());
    assertThat(severeBrowserLogs()).as("errors in the browser's console").isEmpty();
  }

  @Test
  void should_show_the_login_form_when_a_console_page_is_opened_without_a_token() {
    for (String page :
        List.of("/#/devices", "/#/fleet", "/#/sinks", "/#/device/" + UUID.randomUUID())) {
      browser.get(url(page));
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(find("#login-form").isDisplayed()).isTrue());
      assertThat(browser.getCurrentUrl()).endsWith("#/login");
      assertThat(browser.findElements(By.cssSelector("#device-rows"))).isEmpty();
    }
  }

  @Test
  void should_show_a_published_value_live_when_a_device_created_in_the_console_publishes()
      throws Exception {
    logIn("#/devices");
    String name = "console-" + UUID.randomUUID().toString().substring(0, 8);
    find("#create-form input[name=name]").sendKeys(name);
    find("#create-form button[type=submit]").click();
    String accessToken = awaitText("#created .access-token");
    assertThat(find("#created .command").getText())
        .contains("mosquitto_pub -h 127.0.0.1 -p " + mqttPort() + " -u " + accessToken)
        .contains("-t v1/devices/me/telemetry");
    await()
        .atMost(PATIENCE)
        .ignoreExceptions()
        .untilAsserted(() -> assertThat(find("#device-rows").getText()).contains(name));
    screenshot("devices-phone");

    try (PahoDevice device = new PahoDevice(mqttPort(), accessToken, true)) {
      // Four minutes of history before the device page opens, for its chart.
      device.publish(TELEMETRY, lastMinutes(System.currentTimeMillis() - 10_000));
      find("#created h3 a").click();
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(find("h1").getText()).isEqualTo(name));
      awaitText("#latest-rows tr[data-key=temperature] td.value");
      browser.executeScript("window.sameDocument = true");

      device.publish(TELEMETRY, "{\"temperature\":21.5}");
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(latest("temperature")).isEqualTo("21.5"));
      screenshot("device-phone");

      browser.manage().window().setSize(DESKTOP);
      device.publish(TELEMETRY, "{\"temperature\":22.5,\"humidity\":41}");
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(latest("temperature")).isEqualTo("22.5"));
      assertThat(find("#chart canvas").isDisplayed()).isTrue();
      screenshot("device-desktop");
    }
    assertThat(browser.executeScript("return window.sameDocument === true")).isEqualTo(true);
    assertThat(find("#live-status").getText()).isEqualTo("live");
  }

  @Test
  void should_show_history_attributes_rpc_answers_and_dead_letters_when_used_on_the_device_page()
      throws Exception {
    String accessToken = "page-" + UUID.randomUUID();
    String id = createDevice("page-" + accessToken, accessToken).id().value().toString();
    try (PahoDevice device = new PahoDevice(mqttPort(), accessToken, true)) {
      device
          .subscribe("v1/devices/me/attributes", 1)
          .answering(1, (topic, request) -> "{\"ok\":7}");
      device.publish(TELEMETRY, lastMinutes(System.currentTimeMillis()));
      browser.manage().window().setSize(DESKTOP);
      logIn("#/device/" + id);
      awaitText("#latest-rows tr[data-key=temperature] td.value");

      // History: 25 values in the last hour, counted in one-minute buckets.
      choose("select[name=history-agg]", "COUNT");
      find("input[name=history-key]").clear();
      find("input[name=history-key]").sendKeys("temperature");
      find("select[name=history-agg]").submit();
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                List<WebElement> counts =
                    browser.findElements(By.cssSelector("#history-rows td:nth-child(2)"));
                assertThat(counts).isNotEmpty();
                assertThat(counts.stream().mapToInt(td -> Integer.parseInt(td.getText())).sum())
                    .isEqualTo(25);
              });

      // A shared attribute saved on the page is pushed to the device; a client one is shown live.
      find("textarea[name=attributes-SHARED_SCOPE]").sendKeys("{\"mode\":\"eco\"}");
      find("textarea[name=attributes-SHARED_SCOPE]").submit();
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(
              () -> assertThat(find("#SHARED_SCOPE tbody").getText()).contains("mode eco"));
      await()
          .atMost(PATIENCE)
          .untilAsserted(
              () ->
                  assertThat(device.on("v1/devices/me/attributes"))
                      .extracting(PahoDevice.Received::payload)
                      .contains("{\"mode\":\"eco\"}"));
      device.publish("v1/devices/me/attributes", "{\"firmware\":\"1.2.0\"}");
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(
              () -> assertThat(find("#CLIENT_SCOPE tbody").getText()).contains("firmware 1.2.0"));

      // Two-way RPC: the device's answer.
      find("input[name=rpc-method]").sendKeys("getTemperature");
      find("input[name=rpc-method]").submit();
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(find("#rpc-answer").getText()).contains("\"ok\": 7"));

      // A payload that is not JSON: acknowledged, kept as a dead letter.
      device.publish(TELEMETRY, "not json");
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                find("#dead-letters-refresh").click();
                assertThat(find("#dead-letter-rows").getText()).contains("not json");
              });
      screenshot("device-sections-desktop");
    }
  }

  @Test
  void should_show_fleet_numbers_when_a_device_is_connected() throws Exception {
    String accessToken = "fleet-" + UUID.randomUUID();
    createDevice("fleet-" + accessToken, accessToken);
    try (PahoDevice device = new PahoDevice(mqttPort(), accessToken, true)) {
      browser.manage().window().setSize(DESKTOP);
      logIn("#/fleet");
      await()
          .atMost(PATIENCE)
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                assertThat(Integer.parseInt(number("fleet-connections"))).isGreaterThanOrEqualTo(1);
                assertThat(Integer.parseInt(number("fleet-storage"))).isGreaterThanOrEqualTo(0);
                // Rates appear from the second sample on.
                assertThat(Double.parseDouble(number("fleet-messages"))).isGreaterThanOrEqualTo(0);
              });
      // Traffic between two samples shows as a rate and an acknowledgement latency.
      await()
          .atMost(PATIENCE)
          .untilAsserted(
              () -> {
                device.publish(TELEMETRY, "{\"temperature\":20}");
                assertThat(Double.parseDouble(number("fleet-messages"))).isPositive();
                assertThat(find("#fleet-latency .number").getText()).endsWith(" ms");
              });
      screenshot("fleet-desktop");
    }
  }

  @Test
  void should_list_a_sink_pause_it_and_open_its_dead_letters_on_the_sinks_page()
      throws IOException {
    String name = "console-sink-" + UUID.randomUUID();
    ObjectNode configuration = JSON.createObjectNode();
    // Nothing listens there: the sink retries, and says so.
    configuration.put("url", "http://127.0.0.1:9/console");
    configuration.put("secret", "console-secret-0123456789");
    SinkView sink =
        server
            .sinkAdmin()
            .orElseThrow()
            .create(new SinkDraft(name, "WEBHOOK", JSON.createObjectNode(), configuration))
            .toCompletableFuture()
            .join();
    browser.manage().window().setSize(DESKTOP);
    logIn("#/sinks");
    await()
        .atMost(PATIENCE)
        .ignoreExceptions()
        .untilAsserted(() -> assertThat(find("#sink-rows").getText()).contains(name));
    String row = "#sink-rows tr[data-id='" + sink.id() + "'] ";
    find(row + "button[name=pause]").click();
    await()
        .atMost(PATIENCE)
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              assertThat(find(row + "button[name=resume]").isDisplayed()).isTrue();
              assertThat(find(row.trim()).getText()).contains("PAUSED");
            });
    find(row + "button[name=dead-letters]").click();
    await()
        .atMost(PATIENCE)
        .ignoreExceptions()
        .untilAsserted(() -> assertThat(find("#sink-dead-letters").isDisplayed()).isTrue());
    screenshot("sinks-desktop");
  }

  @Test
  void should_answer_console_files_with_their_types_and_security_headers_when_fetched() {
    HttpResponse<String> page = send(HttpRequest.newBuilder(uri("/")).GET());
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(header(page, "Content-Type")).startsWith("text/html");
    assertThat(header(page, "Content-Security-Policy"))
        .contains("script-src 'self'", "style-src 'self'", "frame-ancestors 'none'")
        .contains("connect-src 'self' ws://127.0.0.1:" + server.httpPort());
    assertThat(header(page, "X-Content-Type-Options")).isEqualTo("nosniff");
    assertThat(header(page, "X-Frame-Options")).isEqualTo("DENY");
    assertThat(header(page, "Cache-Control")).isEqualTo("no-cache");

    for (String script : List.of("/console/app.js", "/console/lib/uPlot.esm.js")) {
      HttpResponse<String> js = send(HttpRequest.newBuilder(uri(script)).GET());
      assertThat(js.statusCode()).as(script).isEqualTo(200);
      assertThat(header(js, "Content-Type")).startsWith("application/javascript");
    }
    assertThat(
            header(send(HttpRequest.newBuilder(uri("/console/console.css")).GET()), "Content-Type"))
        .startsWith("text/css");
    assertThat(ok(send(HttpRequest.newBuilder(uri("/console/info")).GET())).get("mqttPort").asInt())
        .isEqualTo(mqttPort());
    assertThat(send(HttpRequest.newBuilder(uri("/console/lib/other.js")).GET()).statusCode())
        .isEqualTo(404);
    assertThat(send(HttpRequest.newBuilder(uri("/console/missing.js")).GET()).statusCode())
        .isEqualTo(404);
  }

  /**
   * Telemetry of the four minutes before {@code end}, 25 values ten seconds apart (ThingsBoard's
   * array of timestamped values).
   */
  private static String lastMinutes(long end) {
    StringBuilder json = new StringBuilder("[");
    for (int i = 24; i >= 0; i--) {
      double temperature = 21 + Math.sin(i / 3.0);
      json.append(i == 24 ? "" : ",")
          .append("{\"ts\":")
          .append(end - i * 10_000L)
          .append(",\"values\":{\"temperature\":")
          .append(String.format(Locale.ROOT, "%.2f", temperature))
          .append(",\"humidity\":")
          .append(40 + i % 5)
          .append("}}");
    }
    return json.append(']').toString();
  }

  private void logIn(String hash) {
    browser.get(url("/" + hash));
    await()
        .atMost(PATIENCE)
        .ignoreExceptions()
        .untilAsserted(() -> assertThat(find("#login-form").isDisplayed()).isTrue());
    find("#login-form input[name=username]").sendKeys(ADMIN);
    find("#login-form input[name=password]").sendKeys(PASSWORD);
    find("#login-form button[type=submit]").click();
    await()
        .atMost(PATIENCE)
        .untilAsserted(() -> assertThat(browser.getCurrentUrl()).endsWith(hash));
  }

  /** Picks an option of a select element, as a user's choice does (a change event). */
  private void choose(String css, String value) {
    browser.executeScript(
        "arguments[0].value = arguments[1];" + " arguments[0].dispatchEvent(new Event('change'));",
        find(css),
        value);
  }

  /** The latest value of a key as the device page shows it. */
  private String latest(String key) {
    return find("#latest-rows tr[data-key=" + key + "] td.value").getText();
  }

  private WebElement find(String css) {
    return browser.findElement(By.cssSelector(css));
  }

  /** The text of an element once it is there and not empty. */
  private String awaitText(String css) {
    return await()
        .atMost(PATIENCE)
        .ignoreExceptions()
        .until(() -> find(css).getText(), text -> !text.isBlank());
  }

  /** The big number of a fleet figure, once it is one. */
  private String number(String id) {
    String text = find("#" + id + " .number").getText();
    assertThat(text).matches("-?[0-9]+(\\.[0-9]+)?");
    return text;
  }

  private List<String> severeBrowserLogs() {
    return browser.manage().logs().get(LogType.BROWSER).getAll().stream()
        .filter(entry -> entry.getLevel().intValue() >= Level.SEVERE.intValue())
        .map(LogEntry::getMessage)
        .toList();
  }

  private void screenshot(String name) throws IOException {
    Path shot = browser.getScreenshotAs(OutputType.FILE).toPath();
    Files.copy(shot, SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
  }

  private String url(String path) {
    return uri(path).toString();
  }

  private static String header(HttpResponse<String> response, String name) {
    return response.headers().firstValue(name).orElse("");
  }
}
