package io.fieldline.server.console;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpCharsets;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The web console (docs/console.md): a single page served from the classpath ({@code console/}),
 * {@code GET /} answering its {@code index.html}, its scripts and styles under {@code
 * /console/<file>}, the uPlot chart library from its webjar under {@code /console/lib/}, and {@code
 * GET /console/info}, the MQTT ports the page shows in its {@code mosquitto_pub} line.
 *
 * <p>Everything here is public: the page holds no data, it calls the {@code /api} endpoints with
 * the token the user logs in for. Every answer carries a Content-Security-Policy that lets the page
 * load scripts and styles only from this server and connect only to it (HTTP and its WebSocket),
 * plus {@code nosniff} and {@code DENY} framing. Files are answered with {@code Cache-Control:
 * no-cache} and revalidated by their ETag, so a new server version is picked up at the next load
 * without versioned file names. Stateless.
 */
public final class ConsoleRoutes extends AllDirectives {

  /** What a file name under /console/ may look like: no directories, no dots but the suffix. */
  private static final Pattern FILE = Pattern.compile("[a-z][a-z0-9-]*\\.(?:html|js|css|svg)");

  /** A Host header value safe to repeat in the CSP (no spaces, semicolons or quotes). */
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.\\-]+(:[0-9]{1,5})?");

  private static final ContentType JAVASCRIPT =
      MediaTypes.APPLICATION_JAVASCRIPT.toContentType(HttpCharsets.UTF_8);

  private static final Map<String, ContentType> TYPES =
      Map.of(
          "html",
          ContentTypes.TEXT_HTML_UTF8,
          "js",
          JAVASCRIPT,
          "css",
          MediaTypes.TEXT_CSS.toContentType(HttpCharsets.UTF_8),
          "svg",
          MediaTypes.IMAGE_SVG_XML.toContentType());

  /** The files of the uPlot webjar the page uses, by the name it asks for. */
  private static final Map<String, String> LIBRARY =
      Map.of("uPlot.esm.js", "dist/uPlot.esm.js", "uPlot.min.css", "dist/uPlot.min.css");

  private final int mqttPort;
  private final int mqttTlsPort;
  private final String uplotDirectory;

  /**
   * @param mqttPort the bound port of the MQTT listener
   * @param mqttTlsPort the bound port of the MQTT-over-TLS listener, or -1 when there is none
   */
  public ConsoleRoutes(int mqttPort, int mqttTlsPort) {
    this.mqttPort = mqttPort;
    this.mqttTlsPort = mqttTlsPort;
    this.uplotDirectory = "META-INF/resources/webjars/uplot/" + webjarVersion("uplot") + "/";
  }

  /**
   * The routes; mount them beside {@code /api}, outside its token check. Paths are matched before
   * the method, so another method on another path is not answered 405 here.
   */
  public Route routes() {
    return concat(
        pathSingleSlash(() -> served(() -> file("console/index.html", "html"))),
        // What browsers ask for on any page of this server, /metrics included.
        path("favicon.ico", () -> served(() -> file("console/icon.svg", "svg"))),
        pathPrefix(
            "console",
            () ->
                served(
                    () ->
                        concat(
                            path("info", this::info),
                            path(
                                PathMatchers.segment("lib").slash(PathMatchers.segment()),
                                this::library),
                            path(PathMatchers.segment(FILE), this::consoleFile)))));
  }

  /** GET only, with the security headers. */
  private Route served(Supplier<Route> inner) {
    return get(() -> securityHeaders(inner));
  }

  private Route consoleFile(String name) {
    return file("console/" + name, name.substring(name.lastIndexOf('.') + 1));
  }

  private Route library(String name) {
    String path = LIBRARY.get(name);
    if (path == null) {
      return reject();
    }
    return file(uplotDirectory + path, name.endsWith(".css") ? "css" : "js");
  }

  private Route file(String resource, String suffix) {
    return respondWithHeader(
        RawHeader.create("Cache-Control", "no-cache"),
        () -> getFromResource(resource, TYPES.get(suffix)));
  }

  private Route info() {
    String tls = mqttTlsPort > 0 ? Integer.toString(mqttTlsPort) : "null";
    String body = "{\"mqttPort\":" + mqttPort + ",\"mqttTlsPort\":" + tls + "}";
    return complete(
        HttpResponse.create()
            .withEntity(ContentTypes.APPLICATION_JSON, body.getBytes(StandardCharsets.UTF_8))
            .addHeader(RawHeader.create("Cache-Control", "no-store")));
  }

  /**
   * The page's CSP names this server's WebSocket origins explicitly (from the Host header the
   * browser sent): {@code 'self'} covers ws: and wss: only in browsers that implement CSP level 3's
   * rule for it.
   */
  private Route securityHeaders(Supplier<Route> inner) {
    return optionalHeaderValueByName(
        "Host",
        host -> {
          String self =
              host.filter(value -> HOST.matcher(value).matches())
                  .map(value -> " ws://" + value + " wss://" + value)
                  .orElse("");
          String policy =
              String.join(
                  "; ",
                  "default-src 'none'",
                  "script-src 'self'",
                  "style-src 'self'",
                  "img-src 'self'",
                  "connect-src 'self'" + self,
                  "base-uri 'none'",
                  "form-action 'self'",
                  "frame-ancestors 'none'");
          List<HttpHeader> headers =
              List.of(
                  RawHeader.create("Content-Security-Policy", policy),
                  RawHeader.create("X-Content-Type-Options", "nosniff"),
                  RawHeader.create("X-Frame-Options", "DENY"),
                  RawHeader.create("Referrer-Policy", "no-referrer"));
          return respondWithHeaders(headers, inner);
        });
  }

  /** The version of a webjar on the classpath, read from the Maven properties it carries. */
  private static String webjarVersion(String artifact) {
    String properties = "META-INF/maven/org.webjars.npm/" + artifact + "/pom.properties";
    try (InputStream in = ConsoleRoutes.class.getClassLoader().getResourceAsStream(properties)) {
      if (in == null) {
        throw new IllegalStateException("webjar " + artifact + " is not on the classpath");
      }
      Properties pom = new Properties();
      pom.load(in);
      return pom.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
