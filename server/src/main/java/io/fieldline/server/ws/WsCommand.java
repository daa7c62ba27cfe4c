package io.fieldline.server.ws;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.NameRules;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.query.Aggregation;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.server.rest.HttpJson;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One subscription command of ThingsBoard's WebSocket API, from either form: the current {@code
 * {"cmds":[{"type":"TIMESERIES",…}]}} or the legacy {@code {"tsSubCmds":[…],"historyCmds":[…],
 * "attrSubCmds":[…]}}. Parsing never throws: a command that cannot be understood becomes a {@link
 * Bad} carrying its {@code cmdId} (when it has one) and the reason, which the session answers.
 *
 * @param type what the client asks for
 * @param cmdId the client's id for it: the {@code subscriptionId} of every update it gets
 * @param device the device ({@code entityType} must be {@code DEVICE}); null only in an unsubscribe
 *     without a valid {@code entityId}
 * @param keys the keys asked for; empty means every key
 * @param scope for {@code ATTRIBUTES}: the scopes (all three when none is named); for {@code
 *     TIMESERIES}: unused
 * @param startTs history start ({@code TIMESERIES} with a time window, {@code TIMESERIES_HISTORY})
 * @param timeWindow history length for {@code TIMESERIES}; 0 asks for latest values instead
 * @param endTs history end for {@code TIMESERIES_HISTORY}
 * @param interval aggregation bucket in milliseconds
 * @param limit most raw values per key of a history
 * @param agg how history values are reduced
 * @param unsubscribe whether this ends the subscription {@code cmdId}
 */
record WsCommand(
    Type type,
    int cmdId,
    @Nullable DeviceId device,
    Optional<Set<String>> keys,
    Set<AttributeScope> scope,
    long startTs,
    long timeWindow,
    long endTs,
    long interval,
    int limit,
    Aggregation agg,
    boolean unsubscribe) {

  /** The device a subscription or history command reads; not for an unsubscribe. */
  DeviceId target() {
    // only an unsubscribe may lack a device: command() refuses any other without a valid entityId
    return Objects.requireNonNull(device, "an unsubscribe names no device");
  }

  /** The command types supported; the others of ThingsBoard's API are refused by name. */
  enum Type {
    TIMESERIES,
    TIMESERIES_HISTORY,
    ATTRIBUTES
  }

  /**
   * A command that could not be understood or is over a bound.
   *
   * @param tag the metric's reason ({@code bad_command}, {@code too_many_keys})
   */
  record Bad(int cmdId, String reason, String tag) {
    Bad(int cmdId, String reason) {
      this(cmdId, reason, "bad_command");
    }
  }

  /** A command naming more keys than a command may. */
  private static final class TooManyKeys extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    TooManyKeys(int max) {
      super("too many keys: a command may name at most " + max);
    }
  }

  /** Every command of one client message, in order, understood or not. */
  record Batch(List<WsCommand> commands, List<Bad> bad) {}

  /** The legacy arrays and the type each stands for. */
  private static final List<String> LEGACY = List.of("tsSubCmds", "historyCmds", "attrSubCmds");

  private static final List<Type> LEGACY_TYPES =
      List.of(Type.TIMESERIES, Type.TIMESERIES_HISTORY, Type.ATTRIBUTES);

  /**
   * The commands of {@code message} (its {@code cmds}, then the legacy arrays), each naming at most
   * {@code maxKeys} keys.
   */
  static Batch parse(JsonNode message, int maxKeys) {
    List<WsCommand> commands = new ArrayList<>();
    List<Bad> bad = new ArrayList<>();
    JsonNode cmds = message.path("cmds");
    if (!cmds.isMissingNode() && !cmds.isNull() && !cmds.isArray()) {
      bad.add(new Bad(0, "cmds must be an array"));
    }
    for (JsonNode cmd : iterable(cmds)) {
      String type = cmd.path("type").asText("");
      Optional<Type> known =
          Arrays.stream(Type.values()).filter(t -> t.name().equals(type)).findFirst();
      if (known.isEmpty()) {
        bad.add(
            new Bad(
                cmd.path("cmdId").asInt(0),
                type.isEmpty()
                    ? "command without a type"
                    : "unsupported command type "
                        + type
                        + "; supported: TIMESERIES,"
                        + " TIMESERIES_HISTORY, ATTRIBUTES"));
        continue;
      }
      add(known.get(), cmd, maxKeys, commands, bad);
    }
    for (int i = 0; i < LEGACY.size(); i++) {
      for (JsonNode cmd : iterable(message.path(LEGACY.get(i)))) {
        add(LEGACY_TYPES.get(i), cmd, maxKeys, commands, bad);
      }
    }
    return new Batch(commands, bad);
  }

  private static Iterable<JsonNode> iterable(JsonNode node) {
    return node.isArray() ? node : List.of();
  }

  private static void add(
      Type type, JsonNode cmd, int maxKeys, List<WsCommand> commands, List<Bad> bad) {
    int cmdId = cmd.path("cmdId").asInt(0);
    try {
      commands.add(command(type, cmd, maxKeys));
    } catch (TooManyKeys e) {
      bad.add(new Bad(cmdId, String.valueOf(e.getMessage()), "too_many_keys"));
    } catch (IllegalArgumentException e) {
      bad.add(new Bad(cmdId, HttpJson.clientMessage(e, "Bad command")));
    }
  }

  private static WsCommand command(Type type, JsonNode cmd, int maxKeys) {
    if (!cmd.path("cmdId").canConvertToInt()) {
      throw new IllegalArgumentException("cmdId must be an integer");
    }
    int cmdId = cmd.path("cmdId").asInt();
    boolean unsubscribe = cmd.path("unsubscribe").asBoolean(false);
    String entityType = cmd.path("entityType").asText("DEVICE");
    if (!"DEVICE".equals(entityType)) {
      throw new IllegalArgumentException(
          "entityType " + entityType + " is not supported; only DEVICE");
    }
    DeviceId device;
    try {
      device = DeviceId.parse(cmd.path("entityId").asText(""));
    } catch (IllegalArgumentException e) {
      if (!unsubscribe) {
        throw new IllegalArgumentException("entityId must be a device id (a UUID)");
      }
      device = null; // an unsubscribe names its subscription by cmdId only
    }
    Aggregation agg;
    String aggText = cmd.path("agg").asText("NONE").toUpperCase(Locale.ROOT);
    try {
      agg = Aggregation.valueOf(aggText);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("unknown agg " + aggText);
    }
    long startTs = nonNegative(cmd, "startTs");
    long timeWindow = nonNegative(cmd, "timeWindow");
    long endTs = nonNegative(cmd, "endTs");
    long interval = nonNegative(cmd, "interval");
    long limit = cmd.has("limit") ? nonNegative(cmd, "limit") : HistoryQuery.DEFAULT_LIMIT;
    return new WsCommand(
        type,
        cmdId,
        device,
        unsubscribe ? Optional.empty() : keys(cmd.path("keys"), maxKeys),
        scopes(cmd.path("scope"), type),
        startTs,
        timeWindow,
        endTs,
        interval,
        (int) Math.max(1, Math.min(limit, 50_000)),
        agg,
        unsubscribe);
  }

  private static long nonNegative(JsonNode cmd, String field) {
    JsonNode value = cmd.path(field);
    if (value.isMissingNode() || value.isNull()) {
      return 0;
    }
    if (!value.canConvertToLong() || value.asLong() < 0) {
      throw new IllegalArgumentException(field + " must be a non-negative integer");
    }
    return value.asLong();
  }

  // ThingsBoard sends keys as a comma-separated string; a JSON array is accepted too. Each key must
  // be a name the store could hold (NameRules), at most maxKeys of them.
  private static Optional<Set<String>> keys(JsonNode keys, int maxKeys) {
    List<String> names = new ArrayList<>();
    if (keys.isArray()) {
      keys.forEach(key -> names.add(key.asText().trim()));
    } else if (keys.isTextual()) {
      Arrays.stream(keys.asText().split(",")).map(String::trim).forEach(names::add);
    }
    Set<String> parsed = new LinkedHashSet<>();
    for (String name : names) {
      if (name.isEmpty()) {
        continue;
      }
      String violation = NameRules.violation(name, NameRules.MAX_LENGTH);
      if (violation != null) {
        throw new IllegalArgumentException("a key " + violation);
      }
      parsed.add(name);
      if (parsed.size() > maxKeys) {
        throw new TooManyKeys(maxKeys);
      }
    }
    return parsed.isEmpty() ? Optional.empty() : Optional.of(Set.copyOf(parsed));
  }

  /** The characters of the names of {@link #keys} (0 for every key). */
  long keyChars() {
    return keys.map(names -> names.stream().mapToLong(String::length).sum()).orElse(0L);
  }

  private static Set<AttributeScope> scopes(JsonNode scope, Type type) {
    String text = scope.asText("");
    if (type != Type.ATTRIBUTES || text.isEmpty()) {
      return Set.of(AttributeScope.values());
    }
    try {
      return Set.of(AttributeScope.valueOf(text));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "unknown scope " + text + "; one of CLIENT_SCOPE, SHARED_SCOPE, SERVER_SCOPE");
    }
  }

  /** Whether this asks for history followed by live values, rather than latest values. */
  boolean history() {
    return timeWindow > 0;
  }
}
