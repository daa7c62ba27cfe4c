package io.fieldline.common.device;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CertificateFingerprint;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Provisioned devices, and the lookups of a device by the credential it presents at CONNECT (one of
 * {@link DeviceCredentials}; administered through {@link DeviceCredentialsStore}). Every method is
 * asynchronous and never blocks the caller; the {@code findBy...} lookups are on the CONNECT path
 * and are expected to be served from a cache.
 */
public interface DeviceRegistry {

  /**
   * Finds the device whose credential is the {@link CredentialsType#ACCESS_TOKEN} {@code token}.
   */
  CompletionStage<Optional<Device>> findByToken(String token);

  /**
   * Finds the device whose {@link CredentialsType#MQTT_BASIC} credential matches {@code login}, its
   * password verified (in constant time, against the stored hash). Looked up as ThingsBoard does:
   * client id + user name first, then client id alone, then user name alone; a credential stored
   * without a password matches whatever password is presented.
   */
  CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login);

  /**
   * Finds the device whose {@link CredentialsType#X509_CERTIFICATE} credential has this {@link
   * CertificateFingerprint}.
   */
  CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint);

  CompletionStage<Optional<Device>> findById(DeviceId id);

  /**
   * Creates a device whose credential is an access token.
   *
   * @param accessToken the token to use, or empty to generate one
   * @return the stored device; fails with {@link DeviceConflictException} when the name or the
   *     token is already taken
   */
  CompletionStage<Device> create(String name, String type, Optional<String> accessToken);

  /** A device for {@link #createAll}: its name, type and additional info (JSON, or null). */
  record NewDevice(String name, String type, @Nullable String additionalInfoJson) {
    public NewDevice {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(type, "type");
    }
  }

  /**
   * Creates devices with generated access tokens, each as {@link #create} would, for a caller that
   * has many to create at once (a gateway's new children). A store where every creation contends on
   * one place (Cassandra: the name's lightweight transaction, all names in one partition) does that
   * part once for all of them. The default starts one {@link #create} per device, each followed by
   * an {@link #update} of its additional info.
   *
   * @param devices distinct names
   * @return one stage per device, in order: the stored device, or failed as {@link #create} fails
   *     (a {@link DeviceConflictException} when its name is taken)
   */
  default List<CompletionStage<Device>> createAll(List<NewDevice> devices) {
    return devices.stream()
        .map(
            wanted ->
                create(wanted.name(), wanted.type(), Optional.empty())
                    .thenCompose(
                        device ->
                            wanted.additionalInfoJson() == null
                                ? CompletableFuture.completedFuture(device)
                                : update(
                                        new DeviceUpdate(
                                            device.id(),
                                            device.name(),
                                            device.type(),
                                            device.label(),
                                            wanted.additionalInfoJson()))
                                    .thenApply(updated -> updated.orElse(device))))
        .toList();
  }

  /** Returns one page of devices ordered by name, starting after {@code afterName} (exclusive). */
  CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName);

  /** Deletes a device and its credentials; completes with false if it did not exist. */
  CompletionStage<Boolean> delete(DeviceId id);

  /** Finds a device by its unique name. */
  CompletionStage<Optional<Device>> findByName(String name);

  /**
   * Changes a device's name, type, label and additional info (ThingsBoard's {@code POST
   * /api/device} with the device's id); its id, creation time and credential are kept.
   *
   * @return the stored device, empty when there is no such device; fails with {@link
   *     DeviceConflictException} when the new name is another device's
   */
  CompletionStage<Optional<Device>> update(DeviceUpdate update);

  /**
   * One page of the devices matching the query, in its order, with the listing's totals. Served
   * without reading the pages before it.
   */
  CompletionStage<PageData<Device>> page(DevicePageQuery query);
}
