package io.fieldline.common;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

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
