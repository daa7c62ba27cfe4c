package io.fieldline.perf.simulations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link LiveUpdates} needs besides {@link SimulationSettings}, from system properties,
 * validated at once.
 *
 * @param rest the server's REST/WebSocket address and the user the subscribers log in as ({@code
 *     httpUrl}, {@code restUser}, {@code restPassword}, required)
 * @param subscriptions live subscriptions in all, one device each ({@code subscriptions}, default
 *     100), spread evenly over the fleet
 * @param sessions WebSocket sessions they are spread over ({@code wsSessions}, default 10: ten
 *     dashboards of ten devices each, within the server's default 20 sessions per user and 100
 *     subscriptions per session)
 * @param grace how long the sessions stay open after the last device stopped publishing ({@code
 *     wsGrace}, seconds, default 5): the last updates still arrive
 * @param keepAlive how often a session sends an empty command ({@code wsKeepAlive}, seconds,
 *     default 30): the server closes a session silent for 90 s
 */
public record LiveSettings(
    RestAccess rest, int subscriptions, int sessions, Duration grace, Duration keepAlive) {

  public static LiveSettings fromSystemProperties() {
    List<String> errors = new ArrayList<>();
    RestAccess rest = RestAccess.fromSystemProperties(errors);
    int subscriptions = SimulationSettings.intProperty("subscriptions", 100, 1, 100_000, errors);
    int sessions = SimulationSettings.intProperty("wsSessions", 10, 1, 10_000, errors);
    if (sessions > subscriptions) {
      errors.add(
          "wsSessions: "
              + sessions
              + " sessions for "
              + subscriptions
              + " subscriptions (at most 1 each)");
    }
    LiveSettings settings =
        new LiveSettings(
            rest,
            subscriptions,
            sessions,
            Duration.ofSeconds(SimulationSettings.intProperty("wsGrace", 5, 1, 600, errors)),
            Duration.ofSeconds(SimulationSettings.intProperty("wsKeepAlive", 30, 1, 85, errors)));
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException("bad live-update settings: " + String.join("; ", errors));
    }
    return settings;
  }

  /**
   * The subscription ids (1-based, unique over the run) of session {@code session} (0-based): the
   * subscriptions dealt out in order, the first sessions taking one more when they do not divide
   * evenly.
   */
  List<Integer> subscriptionIds(int session) {
    int base = subscriptions / sessions;
    int extra = subscriptions % sessions;
    int first = session * base + Math.min(session, extra);
    int count = base + (session < extra ? 1 : 0);
    List<Integer> ids = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      ids.add(first + i + 1);
    }
    return ids;
  }

  /**
   * The index (in the feeder, 0-based) of the device subscription {@code id} watches, out of {@code
   * devices}: spread evenly over the fleet.
   */
  int deviceIndex(int id, int devices) {
    return (int) ((long) (id - 1) * devices / subscriptions);
  }

  /** Settings as they go into the run's summary (no password). */
  public Map<String, Object> describe() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("httpUrl", rest.httpUrl().toString());
    out.put("subscriptions", subscriptions);
    out.put("wsSessions", sessions);
    out.put("graceSeconds", grace.toSeconds());
    out.put("keepAliveSeconds", keepAlive.toSeconds());
    return out;
  }
}
