package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.TimestampRange;
import java.net.http.HttpResponse;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ThingsBoard's {@code DELETE …/timeseries/delete} over real HTTP: which range reaches {@code
 * TelemetryStore.deleteTelemetry}, and every refused parameter combination.
 */
class TelemetryDeleteRoutesTest extends RoutesTestBase {

  private final InMemoryDevices devices = new InMemoryDevices();
  private final InMemoryValues values = new InMemoryValues();
  private Device device;
  private String delete;

  @Override
  Route routes() {
    return values.telemetryRoutes(devices);
  }

  @BeforeEach
  void freshDevice() {
    values.reset();
    device = devices.add("dev-" + DeviceId.random(), "default");
    delete = "/api/plugins/telemetry/DEVICE/" + device.id() + "/timeseries/delete?";
  }

  @Test
  void should_delete_the_range_start_inclusive_end_exclusive_when_start_and_end_are_given() {
    HttpResponse<String> answer = delete(delete + "keys=t,h&startTs=1000&endTs=2000");

    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.body()).isEmpty();
    assertThat(values.telemetryDeletes)
        .containsExactly(
            new InMemoryValues.TelemetryDelete(device.id(), Set.of("t", "h"), 1000, 2000, false));
  }

  @Test
  void should_delete_every_stored_value_when_delete_all_data_for_keys_is_true() {
    assertThat(
            delete(delete + "keys=t&deleteAllDataForKeys=true&rewriteLatestIfDeleted=TRUE")
                .statusCode())
        .isEqualTo(200);
    // startTs and endTs are ignored then, as ThingsBoard ignores them.
    assertThat(
            delete(delete + "keys=t&deleteAllDataForKeys=true&startTs=5&endTs=6&deleteLatest=true")
                .statusCode())
        .isEqualTo(200);

    assertThat(values.telemetryDeletes)
        .containsExactly(
            new InMemoryValues.TelemetryDelete(
                device.id(), Set.of("t"), TimestampRange.MIN, TimestampRange.MAX, true),
            new InMemoryValues.TelemetryDelete(
                device.id(), Set.of("t"), TimestampRange.MIN, TimestampRange.MAX, false));
  }

  @Test
  void should_pass_rewrite_latest_when_asked() {
    delete(delete + "keys=t&startTs=0&endTs=10&rewriteLatestIfDeleted=true");

    assertThat(values.telemetryDeletes.get(0).rewriteLatest()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "startTs=0&endTs=10",
        "keys=&startTs=0&endTs=10",
        "keys=t",
        "keys=t&startTs=0",
        "keys=t&endTs=10",
        "keys=t&startTs=10&endTs=5",
        "keys=t&startTs=-1&endTs=5",
        "keys=t&startTs=0&endTs=253402300800000",
        "keys=t&startTs=abc&endTs=5",
        "keys=t&deleteAllDataForKeys=yes",
        "keys=t&deleteAllDataForKeys=false",
        "keys=t&deleteAllDataForKeys=true&rewriteLatestIfDeleted=1",
        "keys=t&deleteAllDataForKeys=true&deleteLatest=false",
        "keys=a%01b&deleteAllDataForKeys=true",
      })
  void should_answer_400_and_delete_nothing_when_a_parameter_is_missing_or_invalid(String query) {
    assertBadRequest(delete(delete + query));
    assertThat(values.telemetryDeletes).isEmpty();
  }

  @Test
  void should_answer_400_when_more_than_100_keys_are_listed() {
    String keys = IntStream.range(0, 101).mapToObj(i -> "k" + i).collect(Collectors.joining(","));
    assertBadRequest(delete(delete + "deleteAllDataForKeys=true&keys=" + keys));
  }

  @Test
  void should_answer_404_when_the_device_is_unknown() {
    assertNotFound(
        delete(
            "/api/plugins/telemetry/DEVICE/"
                + DeviceId.random()
                + "/timeseries/delete?keys=t&deleteAllDataForKeys=true"));
    assertThat(values.telemetryDeletes).isEmpty();
  }

  @Test
  void should_answer_503_when_storage_fails() {
    values.failure = new StoreException(StoreException.Kind.UNAVAILABLE, "no replica");
    assertError(delete(delete + "keys=t&deleteAllDataForKeys=true"), 503, 2);
  }

  @Test
  void should_answer_400_for_entity_types_other_than_device() {
    assertBadRequest(
        delete(
            "/api/plugins/telemetry/ASSET/"
                + device.id()
                + "/timeseries/delete?keys=t&deleteAllDataForKeys=true"));
    assertBadRequest(get("/api/plugins/telemetry/ASSET/" + device.id() + "/values/timeseries"));
    assertBadRequest(get("/api/plugins/telemetry/DEVICE/not-a-uuid/keys/timeseries"));
  }
}
