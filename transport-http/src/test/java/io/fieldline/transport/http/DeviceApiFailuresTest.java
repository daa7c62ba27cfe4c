package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.StoreException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.CompletionException;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.junit.jupiter.api.Test;

/** How a failed token look-up or attribute read is answered and counted. */
class DeviceApiFailuresTest {

  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final DeviceApiMetrics metrics = new DeviceApiMetrics(meters, () -> 0);

  @Test
  void should_count_a_read_failure_not_a_write_failure_when_a_lookup_fails_in_storage() {
    HttpResponse response =
        DeviceApi.failure(
            new CompletionException(
                new StoreException(StoreException.Kind.TIMEOUT, "lookup timed out")),
            metrics);

    assertThat(response.status().intValue()).isEqualTo(503);
    assertThat(response.getHeader("Retry-After")).isPresent();
    assertThat(meters.get(DeviceApiMetrics.READ_FAILED).counter().count()).isEqualTo(1);
    assertThat(meters.get(DeviceApiMetrics.WRITE_FAILED).counter().count()).isZero();
  }

  @Test
  void should_answer_400_and_count_a_bad_request_when_the_input_is_invalid() {
    HttpResponse response =
        DeviceApi.failure(
            new IllegalArgumentException("the request id must be an integer"), metrics);

    assertThat(response.status().intValue()).isEqualTo(400);
    assertThat(meters.get(DeviceApiMetrics.REJECTED).tag("reason", "bad_request").counter().count())
        .isEqualTo(1);
    assertThat(meters.get(DeviceApiMetrics.READ_FAILED).counter().count()).isZero();
  }
}
