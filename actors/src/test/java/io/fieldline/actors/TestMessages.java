package io.fieldline.actors;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.time.Duration;
import java.util.List;

/** Messages and configurations the actor tests share. */
final class TestMessages {

  /** Upper bound for anything the tests wait for; the happy path takes milliseconds. */
  static final Duration WAIT = Duration.ofSeconds(5);

  private TestMessages() {}

  /** A telemetry message with one long value at {@code ts}. */
  static DeviceMessage.PostTelemetry telemetry(DeviceId deviceId, long ts, String key, long value) {
    return new DeviceMessage.PostTelemetry(
        deviceId, ts, List.of(new TsKvEntry(ts, KvEntry.of(key, value))));
  }

  static DeviceMessage.PostAttributes attributes(DeviceId deviceId, long receivedAt, String key) {
    return new DeviceMessage.PostAttributes(deviceId, receivedAt, List.of(KvEntry.of(key, "v1")));
  }

  /** {@code fieldline.actors} from this module's reference.conf with {@code overrides} on top. */
  static Config config(String overrides) {
    return ConfigFactory.parseString(overrides)
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  static ActorsConfig actorsConfig(String overrides) {
    return ActorsConfig.from(config(overrides));
  }
}
