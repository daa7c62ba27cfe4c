package io.fieldline.perf.mqtt;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * What a device does with the server's RPC requests when {@code respondToRpc()} installed it: a
 * PUBLISH on {@code v1/devices/me/rpc/request/{n}} (ThingsBoard's device API) is answered at once
 * on {@code v1/devices/me/rpc/response/{n}} with {@code {"ok":true,"n":<n>,"request":<the request's
 * payload>}}, so that whoever made the call can check the answer is the one to its own request (the
 * server returns it as the two-way call's HTTP body). The request payload is embedded as it came,
 * not parsed: the server sends a JSON object {@code {"method","params"}}, and a device that answers
 * 500 requests a second should spend nothing on JSON.
 *
 * <p>Stateless and shared by every connection of a scenario; the connection calls it on its event
 * loop, without a Gatling action per request.
 */
final class RpcResponder {

  static final String REQUEST_PREFIX = "v1/devices/me/rpc/request/";
  static final String RESPONSE_PREFIX = "v1/devices/me/rpc/response/";

  /** The filter {@code respondToRpc()} subscribes to. */
  static final String REQUEST_FILTER = REQUEST_PREFIX + "+";

  private static final byte[] HEAD = "{\"ok\":true,\"n\":".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] MIDDLE = ",\"request\":".getBytes(StandardCharsets.US_ASCII);

  /** An answer to send: topic and payload. */
  record Answer(String topic, byte[] payload) {}

  /** Whether {@code topic} is an RPC request, well formed or not (then it is not queued). */
  static boolean isRequest(String topic) {
    return topic.startsWith(REQUEST_PREFIX);
  }

  /**
   * The answer to the request published on {@code topic}, or null when the topic's last level is
   * not a request id (a decimal number of 1 to 10 digits: ThingsBoard's ids are positive ints).
   */
  static @Nullable Answer answer(String topic, byte[] request) {
    if (!isRequest(topic)) {
      return null;
    }
    String id = topic.substring(REQUEST_PREFIX.length());
    if (id.isEmpty() || id.length() > 10) {
      return null;
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c < '0' || c > '9') {
        return null;
      }
    }
    byte[] n = id.getBytes(StandardCharsets.US_ASCII);
    byte[] body = request.length == 0 ? "null".getBytes(StandardCharsets.US_ASCII) : request;
    byte[] payload = new byte[HEAD.length + n.length + MIDDLE.length + body.length + 1];
    int at = 0;
    System.arraycopy(HEAD, 0, payload, at, HEAD.length);
    at += HEAD.length;
    System.arraycopy(n, 0, payload, at, n.length);
    at += n.length;
    System.arraycopy(MIDDLE, 0, payload, at, MIDDLE.length);
    at += MIDDLE.length;
    System.arraycopy(body, 0, payload, at, body.length);
    payload[payload.length - 1] = '}';
    return new Answer(RESPONSE_PREFIX + id, payload);
  }

  private RpcResponder() {}
}
