package io.fieldline.export.sink.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.InvalidSinkException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A webhook sink's settings, read from its stored configuration. {@link #validate} turns what a
 * caller sent into the stored form; {@link #from} reads the stored form back. Immutable.
 *
 * @param url where batches are POSTed: absolute {@code http} or {@code https} with a host, no user
 *     info
 * @param secret the HMAC-SHA256 key of {@code X-Fieldline-Signature} (UTF-8), 16 to 1,024 chars
 * @param headers extra request headers, in the caller's order
 * @param batchSize most records per POST
 * @param maxBatchBytes most bytes of record JSON per POST
 * @param lingerMs how long a batch that is not full waits for more records
 * @param timeoutMs how long one POST may take, connect to last byte of the answer
 */
record WebhookConfig(
    URI url,
    String secret,
    Map<String, String> headers,
    int batchSize,
    int maxBatchBytes,
    int lingerMs,
    int timeoutMs) {

  static final String URL = "url";
  static final String SECRET = "secret";
  static final String HEADERS = "headers";
  static final String BATCH_SIZE = "batchSize";
  static final String MAX_BATCH_BYTES = "maxBatchBytes";
  static final String LINGER_MS = "lingerMs";
  static final String TIMEOUT_MS = "timeoutMs";

  private static final List<String> FIELDS =
      List.of(URL, SECRET, HEADERS, BATCH_SIZE, MAX_BATCH_BYTES, LINGER_MS, TIMEOUT_MS);

  static final int MAX_URL_LENGTH = 2048;
  static final int MIN_SECRET_LENGTH = 16;
  static final int MAX_SECRET_LENGTH = 1024;
  static final int MAX_HEADERS = 32;
  static final int MAX_HEADER_VALUE_LENGTH = 4096;

  /**
   * Headers the sink sets itself, that the JDK's client owns ({@code Connection}, {@code Expect},
   * {@code Upgrade} are restricted there) or that would change how the body is framed or the
   * connection is kept (hop-by-hop headers); {@code X-Fieldline-*} is refused as a prefix.
   */
  private static final Set<String> RESERVED_HEADERS =
      Set.of(
          "content-type",
          "content-length",
          "host",
          "connection",
          "expect",
          "upgrade",
          "transfer-encoding",
          "te",
          "trailer",
          "keep-alive",
          "proxy-connection");

  WebhookConfig {
    headers = Map.copyOf(headers);
  }

  /** The exporter's batching for this sink. */
  Batching batching() {
    return new Batching(
        batchSize, maxBatchBytes, Duration.ofMillis(lingerMs), Duration.ofMillis(timeoutMs));
  }

  /**
   * Checks a configuration and returns its stored form: every field present, defaults filled in.
   * Lists every problem found, separated by {@code "; "}.
   *
   * @param previous the stored configuration when updating: a {@code secret} left out (or null)
   *     keeps its value
   */
  static ObjectNode validate(ObjectNode given, @Nullable ObjectNode previous)
      throws InvalidSinkException {
    List<String> errors = new ArrayList<>();
    for (Iterator<String> names = given.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        errors.add("unknown field '" + name + "' (known: " + String.join(", ", FIELDS) + ")");
      }
    }
    ObjectNode stored = JsonNodeFactory.instance.objectNode();
    String url = checkUrl(given.get(URL), errors);
    stored.put(URL, url);
    stored.put(SECRET, checkSecret(given.get(SECRET), previous, errors));
    stored.set(HEADERS, checkHeaders(given.get(HEADERS), errors));
    stored.put(BATCH_SIZE, integer(given, BATCH_SIZE, 500, 1, 10_000, errors));
    stored.put(MAX_BATCH_BYTES, integer(given, MAX_BATCH_BYTES, 1 << 20, 1024, 16 << 20, errors));
    stored.put(LINGER_MS, integer(given, LINGER_MS, 100, 0, 10_000, errors));
    stored.put(TIMEOUT_MS, integer(given, TIMEOUT_MS, 10_000, 100, 120_000, errors));
    if (!errors.isEmpty()) {
      throw new InvalidSinkException("invalid webhook configuration: " + String.join("; ", errors));
    }
    return stored;
  }

  /**
   * Reads a stored configuration (one {@link #validate} returned).
   *
   * @throws IllegalArgumentException if it is not one
   */
  static WebhookConfig from(ObjectNode stored) {
    Map<String, String> headers = new LinkedHashMap<>();
    JsonNode headersNode = stored.path(HEADERS);
    for (Map.Entry<String, JsonNode> header : headersNode.properties()) {
      headers.put(header.getKey(), header.getValue().asText());
    }
    String url = stored.path(URL).asText();
    String secret = stored.path(SECRET).asText();
    if (url.isEmpty() || secret.isEmpty()) {
      throw new IllegalArgumentException("not a stored webhook configuration: url or secret empty");
    }
    return new WebhookConfig(
        URI.create(url),
        secret,
        headers,
        stored.path(BATCH_SIZE).asInt(500),
        stored.path(MAX_BATCH_BYTES).asInt(1 << 20),
        stored.path(LINGER_MS).asInt(100),
        stored.path(TIMEOUT_MS).asInt(10_000));
  }

  private static String checkUrl(@Nullable JsonNode node, List<String> errors) {
    if (node == null || node.isNull()) {
      errors.add("url is required");
      return "";
    }
    if (!node.isTextual()) {
      errors.add("url must be a string");
      return "";
    }
    String text = node.asText();
    if (text.length() > MAX_URL_LENGTH) {
      errors.add("url is longer than " + MAX_URL_LENGTH + " characters");
      return "";
    }
    URI uri;
    try {
      uri = new URI(text);
    } catch (URISyntaxException e) {
      errors.add("url is not a URL: " + e.getMessage());
      return "";
    }
    String scheme = uri.getScheme();
    if (scheme == null
        || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
        || uri.isOpaque()) {
      errors.add("url must be an absolute http:// or https:// URL, got '" + text + "'");
      return "";
    }
    if (uri.getRawUserInfo() != null) {
      errors.add("url must not hold user info (user:password@); use headers for credentials");
      return "";
    }
    if (uri.getHost() == null || uri.getHost().isEmpty()) {
      errors.add("url must name a host");
      return "";
    }
    if (uri.getPort() > 65_535) {
      errors.add("url's port must be at most 65535");
      return "";
    }
    try {
      HttpRequest.newBuilder(uri);
    } catch (IllegalArgumentException e) {
      errors.add("url cannot be requested: " + e.getMessage());
      return "";
    }
    return text;
  }

  private static String checkSecret(
      @Nullable JsonNode node, @Nullable ObjectNode previous, List<String> errors) {
    if (node == null || node.isNull()) {
      JsonNode kept = previous == null ? null : previous.get(SECRET);
      if (kept != null && kept.isTextual() && !kept.asText().isEmpty()) {
        return kept.asText();
      }
      errors.add("secret is required");
      return "";
    }
    if (!node.isTextual()) {
      errors.add("secret must be a string");
      return "";
    }
    String secret = node.asText();
    if (secret.length() < MIN_SECRET_LENGTH || secret.length() > MAX_SECRET_LENGTH) {
      errors.add(
          "secret must be "
              + MIN_SECRET_LENGTH
              + " to "
              + MAX_SECRET_LENGTH
              + " characters long, got "
              + secret.length());
      return "";
    }
    return secret;
  }

  private static ObjectNode checkHeaders(@Nullable JsonNode node, List<String> errors) {
    ObjectNode headers = JsonNodeFactory.instance.objectNode();
    if (node == null || node.isNull()) {
      return headers;
    }
    if (!node.isObject()) {
      errors.add("headers must be an object of header names to string values");
      return headers;
    }
    if (node.size() > MAX_HEADERS) {
      errors.add("headers may hold at most " + MAX_HEADERS + " headers");
      return headers;
    }
    for (Map.Entry<String, JsonNode> header : node.properties()) {
      String name = header.getKey();
      String lower = name.toLowerCase(Locale.ROOT);
      if (RESERVED_HEADERS.contains(lower) || lower.startsWith("x-fieldline-")) {
        errors.add("header '" + name + "' is set by the sink and may not be configured");
        continue;
      }
      if (!header.getValue().isTextual()) {
        errors.add("header '" + name + "' must have a string value");
        continue;
      }
      String value = header.getValue().asText();
      if (value.length() > MAX_HEADER_VALUE_LENGTH) {
        errors.add("header '" + name + "' is longer than " + MAX_HEADER_VALUE_LENGTH + " chars");
        continue;
      }
      try {
        // The JDK client's own checks: a token name, no CR/LF or other controls in the value.
        HttpRequest.newBuilder().header(name, value);
      } catch (IllegalArgumentException e) {
        errors.add("header '" + name + "' is not a valid HTTP header: " + e.getMessage());
        continue;
      }
      headers.put(name, value);
    }
    return headers;
  }

  private static int integer(
      ObjectNode given, String field, int fallback, int min, int max, List<String> errors) {
    JsonNode node = given.get(field);
    if (node == null || node.isNull()) {
      return fallback;
    }
    if (!node.isIntegralNumber() || !node.canConvertToInt()) {
      errors.add(field + " must be an integer");
      return fallback;
    }
    int value = node.intValue();
    if (value < min || value > max) {
      errors.add(field + " must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }
}
