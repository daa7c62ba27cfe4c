package io.fieldline.transport.http;

import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.log.LogThrottles;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP device API's meters ({@code fieldline.http.device.*}) and its rate-limited log of
 * refusals: at most one line per {@link Refusal} every 10 seconds, with the number of lines left
 * out since, so that a misbehaving fleet cannot fill the disk. Tags come from enums (bounded);
 * never a device id or a token. Thread-safe.
 */
final class DeviceApiMetrics {

  static final String REQUESTS = "fieldline.http.device.requests";
  static final String REJECTED = "fieldline.http.device.rejected";
  static final String WRITE_FAILED = "fieldline.http.device.write.failed";
  static final String READ_FAILED = "fieldline.http.device.read.failed";
  static final String DEAD_LETTERED = "fieldline.http.device.dead.lettered";
  static final String POLLS = "fieldline.http.device.polls";
  static final String POLL_ENDED = "fieldline.http.device.poll.ended";
  static final String RPC = "fieldline.http.device.rpc";
  static final String RPC_ANNOUNCED = "fieldline.http.device.rpc.announced";

  private static final Logger LOG = LoggerFactory.getLogger(DeviceApiMetrics.class);

  /** What a request asks for; the {@code resource} tag of {@link #REQUESTS}. */
  enum Resource {
    TELEMETRY,
    ATTRIBUTES,
    ATTRIBUTES_READ,
    ATTRIBUTE_UPDATES,
    RPC_POLL,
    RPC_REPLY,
    CLIENT_RPC,
    FIRMWARE,
    PROVISION
  }

  /** Why a request was refused with a 4xx; the {@code reason} tag of {@link #REJECTED}. */
  enum Refusal {
    /** The access token matches no device (401). */
    UNKNOWN_TOKEN,
    /**
     * The source address sent as many unknown tokens as it may for now (429, without a token
     * look-up).
     */
    FAILED_AUTH_LIMIT,
    /** A path under {@code /api/v1/} that is no resource of the API, or the API is off (404). */
    NOT_FOUND,
    /** An unparseable body or query parameter (400). */
    BAD_REQUEST,
    /** A body over the size limit (413). */
    TOO_LARGE,
    /** A method the resource does not serve (405). */
    METHOD_NOT_ALLOWED,
    /** As many uploads of the device in flight as it may have (429). */
    TOO_MANY_WRITES,
    /**
     * As many long polls waiting, for the device, from the source address or on the node, as there
     * may be (429).
     */
    TOO_MANY_POLLS,
    /** Client-side RPC or attribute reads above the device's rate (429). */
    RATE_LIMITED,
    /** Any other client error Pekko answered. */
    OTHER;

    static Refusal of(int status) {
      return switch (status) {
        case 400 -> BAD_REQUEST;
        case 401 -> UNKNOWN_TOKEN;
        case 404 -> NOT_FOUND;
        case 405 -> METHOD_NOT_ALLOWED;
        case 413, 414, 431 -> TOO_LARGE;
        default -> OTHER;
      };
    }
  }

  /** How a long poll ended; the {@code outcome} tag of {@link #POLL_ENDED}. */
  enum PollOutcome {
    /** It carried an update or an RPC request. */
    ANSWERED,
    /** Nothing came within its timeout (408). */
    TIMEOUT,
    /** The server stopped (503). */
    STOPPED,
    /** Its client closed the connection first; its slots were freed then. */
    CLIENT_GONE
  }

  /**
   * What became of a server-side RPC request on this API; the {@code outcome} tag of {@link #RPC}.
   */
  enum RpcOutcome {
    /** A poll took it and answered with it. */
    TAKEN,
    /** The device's reply reached the request. */
    RESPONDED,
    /** A reply matched no request waiting for one (unknown id, timed out, answered already). */
    UNKNOWN_REPLY,
    /** A two-way request got no reply within its timeout. */
    EXPIRED
  }

  private final Map<Resource, Counter> requests = new EnumMap<>(Resource.class);
  private final Map<Refusal, Counter> rejected = new EnumMap<>(Refusal.class);
  private final LogThrottles<Refusal> refusalLog = new LogThrottles<>(Refusal.class);
  private final Map<PollOutcome, Counter> pollEnded = new EnumMap<>(PollOutcome.class);
  private final Map<RpcOutcome, Counter> rpc = new EnumMap<>(RpcOutcome.class);
  private final Counter writeFailed;
  private final Counter readFailed;
  private final Counter deadLettered;
  private final Counter rpcAnnounced;
  private final LogThrottle failureLog = new LogThrottle();
  private final LogThrottle readFailureLog = new LogThrottle();
  private final LogThrottle deadLetterLog = new LogThrottle();
  private final LogThrottle replyLog = new LogThrottle();

  DeviceApiMetrics(MeterRegistry registry, Supplier<Number> waitingPolls) {
    for (Resource resource : Resource.values()) {
      requests.put(
          resource,
          Counter.builder(REQUESTS)
              .description("HTTP device API requests received (token not yet checked)")
              .tag("resource", tag(resource))
              .register(registry));
    }
    for (Refusal refusal : Refusal.values()) {
      rejected.put(
          refusal,
          Counter.builder(REJECTED)
              .description("HTTP device API requests refused with a client error (4xx)")
              .tag("reason", tag(refusal))
              .register(registry));
    }
    for (PollOutcome outcome : PollOutcome.values()) {
      pollEnded.put(
          outcome,
          Counter.builder(POLL_ENDED)
              .description("HTTP device API long polls ended")
              .tag("outcome", tag(outcome))
              .register(registry));
    }
    for (RpcOutcome outcome : RpcOutcome.values()) {
      rpc.put(
          outcome,
          Counter.builder(RPC)
              .description("Server-side RPC requests on the HTTP device API")
              .tag("outcome", tag(outcome))
              .register(registry));
    }
    writeFailed =
        Counter.builder(WRITE_FAILED)
            .description("HTTP device API uploads not stored (answered 503)")
            .register(registry);
    readFailed =
        Counter.builder(READ_FAILED)
            .description(
                "HTTP device API token look-ups and attribute reads that failed in storage"
                    + " (answered 503)")
            .register(registry);
    deadLettered =
        Counter.builder(DEAD_LETTERED)
            .description("Unparseable HTTP device API uploads kept as dead letters")
            .register(registry);
    rpcAnnounced =
        Counter.builder(RPC_ANNOUNCED)
            .description(
                "HTTP device API RPC polls that announced the device as subscribed to RPC (each"
                    + " makes the RPC service offer waiting requests again)")
            .register(registry);
    Gauge.builder(POLLS, waitingPolls)
        .strongReference(true)
        .description("HTTP device API long polls waiting on this node")
        .register(registry);
  }

  void request(Resource resource) {
    // every EnumMap here holds a meter for every constant, registered in the constructor
    Objects.requireNonNull(requests.get(resource)).increment();
  }

  /**
   * Counts a refusal and logs it, rate-limited: WARN for malformed or oversized input, INFO for the
   * rest. {@code who} names the device or the peer, never the token.
   */
  void refused(Refusal refusal, String who, String detail) {
    Objects.requireNonNull(rejected.get(refusal)).increment();
    long skipped = refusalLog.get(refusal).admit();
    if (skipped < 0) {
      return;
    }
    if (refusal == Refusal.BAD_REQUEST || refusal == Refusal.TOO_LARGE) {
      LOG.warn(
          "[http-device|{}] refused ({}): {} ({} similar lines left out before)",
          who,
          tag(refusal),
          detail,
          skipped);
    } else {
      LOG.info(
          "[http-device|{}] refused ({}): {} ({} similar lines left out before)",
          who,
          tag(refusal),
          detail,
          skipped);
    }
  }

  /** Counts an upload that was not stored; logs at WARN at most once per 10 seconds. */
  void writeFailed(String who, String detail) {
    writeFailed.increment();
    long skipped = failureLog.admit();
    if (skipped >= 0) {
      LOG.warn(
          "[http-device|{}] upload not stored, answered 503: {} ({} similar lines left out before)",
          who,
          detail,
          skipped);
    }
  }

  /**
   * Counts a token look-up or attribute read that failed in storage; logs at WARN at most once per
   * 10 seconds.
   */
  void readFailed(String who, String detail) {
    readFailed.increment();
    long skipped = readFailureLog.admit();
    if (skipped >= 0) {
      LOG.warn(
          "[http-device|{}] storage read failed, answered 503: {} ({} similar lines left out"
              + " before)",
          who,
          detail,
          skipped);
    }
  }

  /** An invalid upload could not be kept as a dead letter (it was refused 400 all the same). */
  void deadLetterFailed(String who, String detail) {
    long skipped = deadLetterLog.admit();
    if (skipped >= 0) {
      LOG.warn(
          "[http-device|{}] invalid payload not kept as a dead letter: {} ({} similar lines left"
              + " out before)",
          who,
          detail,
          skipped);
    }
  }

  /** A reply matched no request waiting for one: counted, and logged at INFO, rate-limited. */
  void unknownReply(String who, String requestId) {
    rpc(RpcOutcome.UNKNOWN_REPLY);
    long skipped = replyLog.admit();
    if (skipped >= 0) {
      LOG.info(
          "[http-device|{}] reply to RPC {} matches no request waiting for one: ignored ({} similar"
              + " lines left out before)",
          who,
          requestId,
          skipped);
    }
  }

  void deadLettered() {
    deadLettered.increment();
  }

  void pollEnded(PollOutcome outcome) {
    Objects.requireNonNull(pollEnded.get(outcome)).increment();
  }

  void rpcAnnounced() {
    rpcAnnounced.increment();
  }

  void rpc(RpcOutcome outcome) {
    Objects.requireNonNull(rpc.get(outcome)).increment();
  }

  private static String tag(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }
}
