package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.deadletter.DeadLetter;
import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
import io.fieldline.transport.common.payload.PayloadParser;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * The upload path against a gateway whose outcomes the test decides (completed, failed, refused or
 * left pending), the way the transport's tests drive its PUBACKs.
 */
class UploadsTest {

  private final List<CompletableFuture<Ack>> submitted = new ArrayList<>();
  private final List<DeviceMessage> messages = new ArrayList<>();
  private final List<DeadLetter> deadLetters = new CopyOnWriteArrayList<>();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final Device device =
      new Device(new DeviceId(UUID.randomUUID()), "d", "test", "token", 0L, null, null);

  private final DeviceInbox gateway =
      message -> {
        CompletableFuture<Ack> outcome = new CompletableFuture<>();
        messages.add(message);
        submitted.add(outcome);
        return outcome;
      };

  private final DeadLetterStore letters =
      letter -> {
        deadLetters.add(letter);
        return CompletableFuture.completedFuture(null);
      };

  private Uploads uploads(String hocon, InvalidPayloadPolicy policy) {
    DeviceApiConfig config =
        DeviceApiConfig.from(
            ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve());
    DeviceApiMetrics metrics = new DeviceApiMetrics(meters, () -> 0);
    return new Uploads(
        gateway,
        PayloadParser.defaults(),
        letters,
        policy,
        new DeviceBudgets(config, System::nanoTime),
        metrics,
        () -> 1_700_000_000_000L);
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static int status(CompletionStage<HttpResponse> answer) {
    return answer.toCompletableFuture().join().status().intValue();
  }

  @Test
  void should_answer_only_once_the_gateway_stored_the_message_when_telemetry_is_uploaded() {
    Uploads uploads = uploads("", InvalidPayloadPolicy.DEAD_LETTER);

    CompletionStage<HttpResponse> answer =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("{\"t\":21.5}"));

    assertThat(answer.toCompletableFuture()).isNotDone();
    assertThat(messages).singleElement().isInstanceOf(DeviceMessage.PostTelemetry.class);
    assertThat(messages.get(0).size()).isEqualTo(1);
    submitted.get(0).complete(Ack.stored());
    assertThat(status(answer)).isEqualTo(200);
  }

  @Test
  void should_answer_503_with_retry_after_when_the_write_fails() {
    Uploads uploads = uploads("", InvalidPayloadPolicy.DEAD_LETTER);

    CompletionStage<HttpResponse> failed =
        uploads.upload(device, Uploads.Kind.ATTRIBUTES, bytes("{\"a\":1}"));
    CompletionStage<HttpResponse> overloaded =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("{\"t\":1}"));
    CompletionStage<HttpResponse> deleted =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("{\"t\":1}"));
    submitted
        .get(0)
        .completeExceptionally(new StoreException(StoreException.Kind.UNAVAILABLE, "no replica"));
    submitted.get(1).complete(Ack.rejected(Ack.Reason.OVERLOADED, "busy"));
    submitted.get(2).complete(Ack.rejected(Ack.Reason.UNKNOWN_DEVICE, "gone"));

    assertThat(status(failed)).isEqualTo(503);
    assertThat(failed.toCompletableFuture().join().getHeader("Retry-After")).isPresent();
    assertThat(status(overloaded)).isEqualTo(503);
    assertThat(status(deleted)).isEqualTo(401);
    assertThat(meters.get(DeviceApiMetrics.WRITE_FAILED).counter().count()).isEqualTo(2);
  }

  @Test
  void should_answer_429_when_the_device_has_max_inflight_uploads_being_stored() {
    Uploads uploads =
        uploads(
            "fieldline.mqtt.max-inflight = 1\nfieldline.mqtt.inflight-low-water = 0",
            InvalidPayloadPolicy.DEAD_LETTER);

    CompletionStage<HttpResponse> first =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("{\"t\":1}"));
    CompletionStage<HttpResponse> second =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("{\"t\":2}"));

    assertThat(status(second)).isEqualTo(429);
    assertThat(submitted).hasSize(1);
    submitted.get(0).complete(Ack.stored());
    assertThat(status(first)).isEqualTo(200);
    CompletionStage<HttpResponse> third =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("{\"t\":3}"));
    submitted.get(1).complete(Ack.stored());
    assertThat(status(third)).isEqualTo(200);
  }

  @Test
  void should_refuse_without_a_dead_letter_when_the_policy_is_close() {
    Uploads uploads = uploads("", InvalidPayloadPolicy.CLOSE);

    CompletionStage<HttpResponse> answer =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("not json"));

    assertThat(status(answer)).isEqualTo(400);
    assertThat(deadLetters).isEmpty();
    assertThat(submitted).isEmpty();
  }

  @Test
  void should_keep_the_body_as_a_dead_letter_when_the_policy_is_dead_letter() {
    Uploads uploads = uploads("", InvalidPayloadPolicy.DEAD_LETTER);

    CompletionStage<HttpResponse> answer =
        uploads.upload(device, Uploads.Kind.TELEMETRY, bytes("not json"));

    assertThat(status(answer)).isEqualTo(400);
    assertThat(deadLetters)
        .singleElement()
        .satisfies(
            letter -> {
              assertThat(letter.topic()).isEqualTo("/api/v1/{token}/telemetry");
              assertThat(new String(letter.payload(), StandardCharsets.UTF_8))
                  .isEqualTo("not json");
              assertThat(letter.deviceId()).isEqualTo(device.id());
            });
    assertThat(submitted).isEmpty();
  }
}
