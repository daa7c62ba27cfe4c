package io.fieldline.server;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The registry of the start's private MQTT listener ({@link MqttWarmUp}): the warm-up devices and
 * nothing else. Each is one of {@link WarmUp}'s reserved device ids with a token drawn for this
 * start (256 random bits), compared in constant time; every other lookup finds nothing and every
 * change is refused. It never reaches storage, and no listener a client can reach uses it.
 */
final class WarmUpDevices implements DeviceRegistry {

  private static final CompletionStage<Optional<Device>> NOT_HERE =
      CompletableFuture.completedFuture(Optional.empty());

  private final List<Device> devices;

  /** {@code count} devices (at most {@link WarmUp#DEVICES}), tokens drawn from {@code random}. */
  WarmUpDevices(int count, SecureRandom random) {
    List<Device> drawn = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      byte[] secret = new byte[32];
      random.nextBytes(secret);
      String token = Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
      drawn.add(
          new Device(WarmUp.device(i), "fieldline-warm-up-" + i, "default", token, 0, null, null));
    }
    this.devices = List.copyOf(drawn);
  }

  List<Device> devices() {
    return devices;
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    byte[] given = token.getBytes(StandardCharsets.UTF_8);
    Device found = null;
    for (Device device : devices) {
      String expected = device.accessToken();
      if (expected != null
          && MessageDigest.isEqual(given, expected.getBytes(StandardCharsets.UTF_8))) {
        found = device;
      }
    }
    return CompletableFuture.completedFuture(Optional.ofNullable(found));
  }

  // Warm-up devices log in with their tokens only.
  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    return NOT_HERE;
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    return NOT_HERE;
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    return CompletableFuture.completedFuture(
        devices.stream().filter(device -> device.id().equals(id)).findFirst());
  }

  @Override
  public CompletionStage<Optional<Device>> findByName(String name) {
    return CompletableFuture.completedFuture(
        devices.stream().filter(device -> device.name().equals(name)).findFirst());
  }

  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    return CompletableFuture.completedFuture(List.of());
  }

  @Override
  public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
    return refused();
  }

  @Override
  public CompletionStage<Device> create(String name, String type, Optional<String> accessToken) {
    return refused();
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    return refused();
  }

  @Override
  public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
    return refused();
  }

  private static <T> CompletionStage<T> refused() {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException("the warm-up's registry holds its own devices only"));
  }
}
