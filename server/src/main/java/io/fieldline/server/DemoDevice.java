package io.fieldline.server;

import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceRegistry;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Provisions the demo device on first start. Its token is generated once and kept in the data
 * directory, so every later start finds the same device by token. Blocking; start-up only.
 */
final class DemoDevice {

  private static final Logger LOG = LoggerFactory.getLogger(DemoDevice.class);

  private DemoDevice() {}

  static @Nullable Device ensure(DeviceRegistry registry, String name, Path dataDir) {
    String token = GeneratedSecrets.resolve("", dataDir, "demo-device-token", 15);
    Optional<Device> existing = registry.findByToken(token).toCompletableFuture().join();
    if (existing.isPresent()) {
      return existing.get();
    }
    try {
      return registry.create(name, "demo", Optional.of(token)).toCompletableFuture().join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof DeviceConflictException) {
        LOG.warn("a device named {} already exists with another token; no demo device", name);
        return null;
      }
      throw e;
    }
  }
}
