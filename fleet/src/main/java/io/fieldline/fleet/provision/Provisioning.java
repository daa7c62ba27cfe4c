package io.fieldline.fleet.provision;

import io.fieldline.common.NameRules;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.profile.ProvisionSecret;
import io.fieldline.common.profile.ProvisionType;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.common.provision.ProvisionRequest;
import io.fieldline.common.provision.ProvisionResponse;
import io.fieldline.fleet.provision.ProvisionMetrics.Refusal;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Answers provisioning requests as ThingsBoard does ({@link DeviceProvisioning}), for every
 * transport:
 *
 * <ol>
 *   <li>the rate limits ({@link ProvisionThrottle}), the size bound and the JSON shape: a refusal
 *       is FAILURE;
 *   <li>the profile found by the provision key, provisioning enabled, the secret right (compared in
 *       constant time): otherwise NOT_FOUND, counted against the source address;
 *   <li>{@code ALLOW_CREATE_NEW_DEVICES}: a name no device has (FAILURE otherwise), generated when
 *       absent; the device is created with the credential asked for (an access token generated when
 *       none is) through {@link DeviceCredentialsStore#createWithCredentials}, its type the
 *       profile's name, then given the profile; if that fails the device is deleted again, so a
 *       retry can succeed;
 *   <li>{@code CHECK_PRE_PROVISIONED_DEVICES}: only a device created beforehand with that name and
 *       profile, answered with its stored credential (every time it asks, as ThingsBoard does).
 * </ol>
 *
 * Nothing is created unless key and secret are right. Storage failures are answered FAILURE. The
 * secret, passwords and tokens are never logged. Thread-safe; never blocks; stages complete on
 * driver I/O threads.
 */
public final class Provisioning implements DeviceProvisioning {

  /** Length of generated access tokens and device names, as ThingsBoard's. */
  static final int GENERATED_LENGTH = 20;

  private static final String ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  // Compared with when no profile has the key, so an unknown key costs what a wrong secret does.
  private static final ProvisionSecret NO_SECRET =
      ProvisionSecret.hash("no profile has this key", new SecureRandom());

  private final DeviceProfileStore profiles;
  private final DeviceRegistry registry;
  private final DeviceCredentialsStore credentials;
  private final ProvisionConfig config;
  private final ProvisionThrottle throttle;
  private final ProvisionMetrics metrics;
  private final SecureRandom random = new SecureRandom();

  /**
   * @param profiles the profiles, and the profile of each device
   * @param registry devices by name, and deletion (the undo of a half-done create)
   * @param credentials device creation with a credential, and stored credentials
   */
  public Provisioning(
      DeviceProfileStore profiles,
      DeviceRegistry registry,
      DeviceCredentialsStore credentials,
      ProvisionConfig config,
      MeterRegistry meters) {
    this.profiles = profiles;
    this.registry = registry;
    this.credentials = credentials;
    this.config = config;
    this.throttle = new ProvisionThrottle(config, System::nanoTime);
    this.metrics = new ProvisionMetrics(meters, throttle);
  }

  @Override
  public CompletionStage<ProvisionResponse> provision(
      byte[] payload, @Nullable InetAddress source) {
    String from = source == null ? "-" : source.getHostAddress();
    CompletionStage<ProvisionResponse> answer;
    try {
      answer = answer(payload, source, from);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return answer
        .exceptionally(
            error -> {
              metrics.refused(Refusal.STORAGE, from, String.valueOf(cause(error)));
              return ProvisionResponse.failed(
                  "Failed to provision device: storage unavailable, retry later");
            })
        .thenApply(
            response -> {
              metrics.answered(response.status());
              return response;
            });
  }

  private CompletionStage<ProvisionResponse> answer(
      byte[] payload, @Nullable InetAddress source, String from) {
    switch (throttle.admit(source)) {
      case ADDRESS_RATE, TOTAL_RATE -> {
        return refuse(Refusal.RATE_LIMITED, from, "over the provisioning rate", null);
      }
      case LOCKED_OUT -> {
        return refuse(Refusal.LOCKED_OUT, from, "too many unknown keys or wrong secrets", null);
      }
      case ADMITTED -> {}
    }
    if (payload.length > config.maxRequestBytes()) {
      return refuse(
          Refusal.TOO_LARGE,
          from,
          "request of " + payload.length + " bytes",
          "Failed to provision device: the request is larger than "
              + config.maxRequestBytes()
              + " bytes");
    }
    ProvisionRequest request;
    try {
      request = ProvisionRequest.parse(payload);
    } catch (IllegalArgumentException e) {
      return refuse(
          Refusal.MALFORMED,
          from,
          String.valueOf(e.getMessage()),
          "Failed to provision device: " + String.valueOf(e.getMessage()));
    }
    if (!request.hasKeyAndSecret()) {
      return notFound(source, from, "no provision key or secret");
    }
    String secret = String.valueOf(request.provisionDeviceSecret());
    return profiles
        .findByProvisionKey(String.valueOf(request.provisionDeviceKey()))
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                NO_SECRET.matches(secret);
                return notFound(source, from, "unknown provision key");
              }
              DeviceProfile profile = found.get();
              if (!profile.admitsProvisioning(secret)) {
                return notFound(
                    source,
                    from,
                    profile.provisionType() == ProvisionType.DISABLED
                        ? "provisioning disabled for the key's profile"
                        : "wrong secret for a provision key");
              }
              return provision(profile, request, from);
            });
  }

  private CompletionStage<ProvisionResponse> provision(
      DeviceProfile profile, ProvisionRequest request, String from) {
    String name = request.deviceName();
    if (name == null && profile.provisionType() == ProvisionType.ALLOW_CREATE_NEW_DEVICES) {
      name = generated();
    }
    if (name == null) {
      return refuse(Refusal.NOT_PRE_PROVISIONED, from, "no device name", ProvisionResponse.FAILED);
    }
    String violation = NameRules.violation(name, NameRules.MAX_LENGTH);
    if (violation != null) {
      return refuse(
          Refusal.BAD_NAME,
          from,
          "deviceName " + violation,
          "Failed to provision device: deviceName " + violation);
    }
    if (profile.provisionType() == ProvisionType.CHECK_PRE_PROVISIONED_DEVICES) {
      return preProvisioned(profile, name, from);
    }
    Optional<DeviceCredentials> asked;
    try {
      asked = request.credentials();
    } catch (IllegalArgumentException e) {
      return refuse(
          Refusal.BAD_CREDENTIALS,
          from,
          String.valueOf(e.getMessage()),
          "Failed to provision device: " + String.valueOf(e.getMessage()));
    }
    DeviceCredentials credential =
        asked.orElseGet(() -> new DeviceCredentials.AccessToken(generated()));
    return create(profile, name, credential, from);
  }

  private CompletionStage<ProvisionResponse> create(
      DeviceProfile profile, String name, DeviceCredentials credential, String from) {
    return registry
        .findByName(name)
        .thenCompose(
            existing -> {
              if (existing.isPresent()) {
                // ThingsBoard: a device of that name "could not be provisioned once more".
                return refuse(
                    Refusal.DEVICE_EXISTS,
                    from,
                    "a device named '" + safe(name) + "' exists",
                    ProvisionResponse.FAILED);
              }
              return credentials
                  .createWithCredentials(name, profile.name(), credential)
                  .handle(
                      (device, error) -> {
                        if (error == null) {
                          return assign(profile, device, credential, from);
                        }
                        Throwable cause = cause(error);
                        if (cause instanceof DeviceConflictException conflict) {
                          return refuse(
                              Refusal.CONFLICT,
                              from,
                              String.valueOf(conflict.getMessage()),
                              "Failed to provision device: "
                                  + String.valueOf(conflict.getMessage()));
                        }
                        if (cause instanceof IllegalArgumentException invalid) {
                          return refuse(
                              Refusal.BAD_CREDENTIALS,
                              from,
                              String.valueOf(invalid.getMessage()),
                              "Failed to provision device: "
                                  + String.valueOf(invalid.getMessage()));
                        }
                        return CompletableFuture.<ProvisionResponse>failedFuture(cause);
                      })
                  .thenCompose(stage -> stage);
            });
  }

  // The new device gets the profile; if that fails it is deleted again (a retry can succeed).
  private CompletionStage<ProvisionResponse> assign(
      DeviceProfile profile, Device device, DeviceCredentials credential, String from) {
    return profiles
        .assign(device.id(), profile.id())
        .handle(
            (assigned, error) -> {
              if (error == null && assigned) {
                metrics.created();
                return CompletableFuture.completedFuture(
                    ProvisionResponse.success(device.id(), credential));
              }
              Throwable cause = error == null ? null : cause(error);
              return registry
                  .delete(device.id())
                  .handle((deleted, deleteError) -> null)
                  .thenCompose(
                      undone ->
                          cause instanceof IllegalArgumentException
                              // The profile was deleted meanwhile.
                              ? refuse(
                                  Refusal.CONFLICT,
                                  from,
                                  String.valueOf(cause.getMessage()),
                                  ProvisionResponse.FAILED)
                              : CompletableFuture.<ProvisionResponse>failedFuture(
                                  cause != null
                                      ? cause
                                      : new IllegalStateException(
                                          "the new device went before it got its profile")));
            })
        .thenCompose(stage -> stage);
  }

  private CompletionStage<ProvisionResponse> preProvisioned(
      DeviceProfile profile, String name, String from) {
    return registry
        .findByName(name)
        .thenCompose(
            found ->
                found.isEmpty()
                    ? CompletableFuture.completedFuture(Optional.<Device>empty())
                    : profiles
                        .profileOf(found.get().id())
                        .thenApply(
                            id ->
                                id.filter(profile.id()::equals).isPresent()
                                    ? found
                                    : Optional.<Device>empty()))
        .thenCompose(
            device -> {
              if (device.isEmpty()) {
                return refuse(
                    Refusal.NOT_PRE_PROVISIONED,
                    from,
                    "no device named '" + safe(name) + "' with the key's profile",
                    ProvisionResponse.FAILED);
              }
              return credentials
                  .findCredentials(device.get().id())
                  .thenCompose(
                      stored ->
                          stored.isEmpty()
                              ? refuse(
                                  Refusal.NOT_PRE_PROVISIONED,
                                  from,
                                  "the device went meanwhile",
                                  ProvisionResponse.FAILED)
                              : CompletableFuture.completedFuture(
                                  ProvisionResponse.success(
                                      device.get().id(), stored.get().credentials())));
            });
  }

  private CompletionStage<ProvisionResponse> notFound(
      @Nullable InetAddress source, String from, String detail) {
    throttle.failed(source);
    metrics.refused(Refusal.NOT_FOUND, from, detail);
    return CompletableFuture.completedFuture(ProvisionResponse.notFound());
  }

  private CompletionStage<ProvisionResponse> refuse(
      Refusal reason, String from, String detail, @Nullable String errorMsg) {
    metrics.refused(reason, from, detail);
    return CompletableFuture.completedFuture(
        ProvisionResponse.failed(
            errorMsg != null
                ? errorMsg
                : "Failed to provision device: " + detail + "; retry later"));
  }

  private String generated() {
    char[] chars = new char[GENERATED_LENGTH];
    for (int i = 0; i < chars.length; i++) {
      chars[i] = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
    }
    return new String(chars);
  }

  private static Throwable cause(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }

  // Client text in a log line: control characters escaped, at most 64 characters.
  private static String safe(String text) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < text.length() && i < 64; i++) {
      char c = text.charAt(i);
      out.append(Character.isISOControl(c) ? '?' : c);
    }
    return text.length() > 64 ? out + "…" : out.toString();
  }
}
