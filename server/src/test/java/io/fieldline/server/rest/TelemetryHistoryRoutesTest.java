package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.device.Device;
import io.fieldline.common.query.HistoryQuery;
import java.net.http.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.Test;

/**
 * The history path of ThingsBoard's newer clients, {@code …/values/timeseries/history}, over real
 * HTTP: the same history read as the older {@code …/values/timeseries} with a range, and a 400
 * without the range (where the older path answers latest values).
 */
class TelemetryHistoryRoutesTest extends RoutesTestBase {

  private final InMemoryValues values = new InMemoryValues();
  private final InMemoryDevices devices = new InMemoryDevices();

  @Override
  Route routes() {
    return values.telemetryRoutes(devices);
  }

  /** {@code …/values/timeseries} of a new device; the values' reads forgotten. */
  private String timeseriesOfNewDevice() {
    values.reset();
    Device device = devices.add("history-" + System.nanoTime(), "default");
    return "/api/plugins/telemetry/DEVICE/" + device.id() + "/values/timeseries";
  }

  @Test
  void should_read_the_same_history_as_the_older_path() {
    String base = timeseriesOfNewDevice();
    String query = "?keys=t,h&startTs=1000&endTs=2000&interval=500&agg=AVG&orderBy=ASC&limit=7";

    HttpResponse<String> older = get(base + query);
    HttpResponse<String> newer = get(base + "/history" + query);

    assertThat(older.statusCode()).as(older.body()).isEqualTo(200);
    assertThat(newer.statusCode()).as(newer.body()).isEqualTo(200);
    assertThat(newer.body()).isEqualTo(older.body());
    assertThat(values.historyQueries).hasSize(2);
    HistoryQuery asked = values.historyQueries.get(1);
    assertThat(asked).isEqualTo(values.historyQueries.get(0));
    assertThat(asked.startTs()).isEqualTo(1000);
    assertThat(asked.endTs()).isEqualTo(2000);
  }

  @Test
  void should_refuse_a_history_read_without_its_range() {
    String base = timeseriesOfNewDevice();
    assertBadRequest(get(base + "/history?keys=t"));
    assertBadRequest(get(base + "/history?keys=t&startTs=1000"));
    assertThat(values.historyQueries).isEmpty();
    // The older path without a range answers latest values.
    assertThat(get(base + "?keys=t").statusCode()).isEqualTo(200);
  }
}
