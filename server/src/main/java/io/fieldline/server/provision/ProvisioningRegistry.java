package io.fieldline.server.provision;

import io.fieldline.common.Device;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DevicePageQuery;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.DeviceUpdate;
import io.fieldline.common.MqttBasicLogin;
import io.fieldline.common.PageData;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.common.provision.ProvisionResponse;
import java.net.InetAddress;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The registry the MQTT transport is given, with provisioning beside it: every {@link
 * DeviceRegistry} call goes to {@code registry} unchanged, and {@link DeviceProvisioning} to the
 * provisioning service. The transport's CONNECT path looks for the provisioning port on the
 * registry it holds, so a {@code provision} login needs no other constructor parameter. Stateless
 * beyond its two delegates; thread-safe as they are.
 */
public final class ProvisioningRegistry implements DeviceRegistry, DeviceProvisioning {

  private final DeviceRegistry registry;
  private final DeviceProvisioning provisioning;

  public ProvisioningRegistry(DeviceRegistry registry, DeviceProvisioning provisioning) {
    this.registry = registry;
    this.provisioning = provisioning;
  }

  @Override
  public CompletionStage<ProvisionResponse> provision(
      byte[] payload, @Nullable InetAddress source) {
    return provisioning.provision(payload, source);
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    return registry.findByToken(token);
  }

  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    return registry.findByBasicCredentials(login);
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    return registry.findByCertificate(sha256Fingerprint);
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    return registry.findById(id);
  }

  @Override
  public CompletionStage<Device> create(String name, String type, Optional<String> accessToken) {
    return registry.create(name, type, accessToken);
  }

  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    return registry.list(pageSize, afterName);
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    return registry.delete(id);
  }

  @Override
  public CompletionStage<Optional<Device>> findByName(String name) {
    return registry.findByName(name);
  }

  @Override
  public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
    return registry.update(update);
  }

  @Override
  public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
    return registry.page(query);
  }
}
