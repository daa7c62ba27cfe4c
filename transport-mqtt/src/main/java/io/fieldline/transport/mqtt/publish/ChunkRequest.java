package io.fieldline.transport.mqtt.publish;

import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;

/**
 * One firmware chunk request as a device publishes it: topic {@code
 * v2/fw/request/{requestId}/chunk/{n}}, payload the chunk size in ASCII decimal. ThingsBoard's
 * Python SDK JSON-encodes that payload ({@code "4096"} with its quotes, {@code ""} for none), so a
 * quoted number is read as the number; an empty payload (or 0) gives no size. Immutable.
 *
 * @param requestId the download's id, echoed in the answer's topic
 * @param chunk the chunk's number, from 0
 * @param size the chunk size asked for, empty when none was given
 */
record ChunkRequest(String requestId, int chunk, OptionalInt size) {

  private static final String CHUNK = "/chunk/";
  private static final int MAX_REQUEST_ID_LENGTH = 64;
  private static final int MAX_PAYLOAD_LENGTH = 32;

  /**
   * Reads a request.
   *
   * @param path the topic after {@code v2/fw/request/}
   * @throws IllegalArgumentException saying what is wrong, for the device's error message
   */
  static ChunkRequest parse(String path, byte[] payload) {
    int separator = path.indexOf(CHUNK);
    if (separator < 1 || path.indexOf('/') != separator) {
      throw new IllegalArgumentException(
          "the topic must be v2/fw/request/{requestId}/chunk/{n}, got v2/fw/request/" + path);
    }
    String requestId = path.substring(0, separator);
    if (requestId.length() > MAX_REQUEST_ID_LENGTH) {
      throw new IllegalArgumentException(
          "the request id must have at most " + MAX_REQUEST_ID_LENGTH + " characters");
    }
    int chunk = number(path.substring(separator + CHUNK.length()), "the chunk number");
    return new ChunkRequest(requestId, chunk, size(payload));
  }

  private static OptionalInt size(byte[] payload) {
    if (payload.length > MAX_PAYLOAD_LENGTH) {
      throw new IllegalArgumentException("the payload must be the chunk size in decimal");
    }
    String text = new String(payload, StandardCharsets.US_ASCII).strip();
    if (text.length() >= 2 && text.startsWith("\"") && text.endsWith("\"")) {
      text = text.substring(1, text.length() - 1).strip();
    }
    if (text.isEmpty()) {
      return OptionalInt.empty();
    }
    int size = number(text, "the chunk size");
    return size == 0 ? OptionalInt.empty() : OptionalInt.of(size);
  }

  private static int number(String text, String what) {
    if (text.isEmpty() || text.length() > 10 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new IllegalArgumentException(what + " must be a non-negative decimal number");
    }
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + " must be at most " + Integer.MAX_VALUE);
    }
  }
}
