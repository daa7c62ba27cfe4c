package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.junit.jupiter.api.Test;

class RejectedRequestsTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final RejectedRequests rejected = new RejectedRequests(registry);
  private final HttpRequest request = HttpRequest.GET("/api/tenant/devices?pageSize=0");

  @Test
  void should_count_client_errors_by_reason_and_pass_every_response_through_unchanged() {
    for (int status : new int[] {400, 400, 404, 409, 413, 429, 418, 200, 204, 503}) {
      HttpResponse response = HttpResponse.create().withStatus(status);
      assertThat(rejected.observe(request, response)).isSameAs(response);
    }

    assertThat(count("bad_request")).isEqualTo(2);
    assertThat(count("not_found")).isEqualTo(1);
    assertThat(count("conflict")).isEqualTo(1);
    assertThat(count("too_large")).isEqualTo(1);
    assertThat(count("throttled")).isEqualTo(1);
    assertThat(count("other")).isEqualTo(1);
    assertThat(registry.find(RejectedRequests.REJECTED).counters())
        .hasSize(RejectedRequests.Reason.values().length);
    assertThat(
            registry.find(RejectedRequests.REJECTED).counters().stream()
                .mapToDouble(c -> c.count())
                .sum())
        .isEqualTo(7);
  }

  @Test
  void should_mask_the_device_token_when_a_device_api_path_is_logged() {
    assertThat(RejectedRequests.loggable("/api/v1/s3cr3t-token/firmware"))
        .isEqualTo("/api/v1/{token}/firmware");
    assertThat(RejectedRequests.loggable("/api/v1/s3cr3t-token/telemetry/"))
        .isEqualTo("/api/v1/{token}/telemetry/");
    assertThat(RejectedRequests.loggable("/api/v1/s3cr3t-token")).isEqualTo("/api/v1/{token}");
    assertThat(RejectedRequests.loggable("//API//V1//s3cr3t-token/rpc"))
        .isEqualTo("//API//V1//{token}/rpc");
    assertThat(RejectedRequests.loggable("/api/v1/")).isEqualTo("/api/v1/");
    assertThat(RejectedRequests.loggable("/api/v1/provision")).isEqualTo("/api/v1/provision");
    assertThat(RejectedRequests.loggable("/api/tenant/devices")).isEqualTo("/api/tenant/devices");
    assertThat(RejectedRequests.loggable("/api/v1x/abc")).isEqualTo("/api/v1x/abc");
    assertThat(RejectedRequests.loggable("/api/v1/t\nforged")).isEqualTo("/api/v1/{token}");
  }

  private double count(String reason) {
    return registry.get(RejectedRequests.REJECTED).tag("reason", reason).counter().count();
  }
}
