package io.fieldline.dao.cassandra.profile;

import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileDraft;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.ProvisionSecret;
import io.fieldline.common.profile.ProvisionType;
import io.fieldline.dao.cassandra.profile.ProfileTable.ProfileRow;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Creating and updating a profile, with its name and provision key unique.
 *
 * <p>A create reserves the name, then the key, then writes the row; a conflict releases what it
 * reserved. An update reserves a new name or key, writes the row by a lightweight transaction
 * conditioned on the row as read, then releases the old name or key; if the row changed meanwhile
 * it releases its new claims and starts again from a new read, at most {@value #MAX_ATTEMPTS}
 * times. A claim is released only after reading the row and finding it does not hold the value.
 *
 * <p>A crash between the steps leaves a claim no row holds: a later reservation of that value finds
 * the claim's owner without the value in its row and takes the claim over (conditioned on that
 * owner), so a value is never blocked for good. Thread-safe; stages complete on driver I/O threads.
 */
final class ProfileWrites {

  static final int MAX_ATTEMPTS = 5;

  private final ProfileTable table;
  private final ProfileClaims names;
  private final ProfileClaims keys;
  private final SecureRandom random = new SecureRandom();

  ProfileWrites(ProfileTable table, ProfileClaims names, ProfileClaims keys) {
    this.table = table;
    this.names = names;
    this.keys = keys;
  }

  CompletionStage<DeviceProfile> create(DeviceProfileDraft draft) {
    ProvisionSecret secret = secret(draft, null);
    DeviceProfile profile =
        profile(DeviceProfileId.random(), draft, secret, System.currentTimeMillis());
    UUID id = profile.id().value();
    return claim(names, "name", profile.name(), id, "device profile name")
        .thenCompose(
            named ->
                claimKey(profile.provisionDeviceKey(), id)
                    .handle(
                        (keyed, error) -> {
                          if (error == null) {
                            return table.insert(profile).thenApply(done -> profile);
                          }
                          return names
                              .release(profile.name(), id)
                              .<DeviceProfile>thenApply(
                                  released -> {
                                    throw rethrown(error);
                                  });
                        })
                    .thenCompose(stage -> stage));
  }

  /** Applies the draft; empty when there is no such profile. */
  CompletionStage<Optional<DeviceProfile>> update(DeviceProfileId id, DeviceProfileDraft draft) {
    return attempt(id, draft, 1);
  }

  private CompletionStage<Optional<DeviceProfile>> attempt(
      DeviceProfileId id, DeviceProfileDraft draft, int attempt) {
    return table
        .load(id)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<DeviceProfile>empty());
              }
              DeviceProfile current = found.get().profile();
              if (found.get().deleting()) {
                throw new DeviceConflictException(
                    "device profile " + id + " is being deleted; try again");
              }
              DeviceProfile next =
                  profile(id, draft, secret(draft, current.secret()), current.createdTime());
              return reserveChanged(current, next)
                  .thenCompose(reserved -> table.updateIfUnchanged(current, next))
                  .thenCompose(
                      applied -> {
                        if (applied) {
                          return releaseOld(current, next).thenApply(done -> Optional.of(next));
                        }
                        // Changed or deleted since read: undo the new claims, read again.
                        return releaseOld(next, current)
                            .thenCompose(
                                released -> {
                                  if (attempt >= MAX_ATTEMPTS) {
                                    throw new DeviceConflictException(
                                        "device profile "
                                            + id
                                            + " kept changing while it was being updated; try"
                                            + " again");
                                  }
                                  return attempt(id, draft, attempt + 1);
                                });
                      });
            });
  }

  // A new name, then a new key; a key conflict releases the new name again.
  private CompletionStage<Void> reserveChanged(DeviceProfile current, DeviceProfile next) {
    UUID id = next.id().value();
    CompletionStage<Void> named =
        next.name().equals(current.name())
            ? CompletableFuture.completedFuture(null)
            : claim(names, "name", next.name(), id, "device profile name");
    return named.thenCompose(
        done ->
            Objects.equals(next.provisionDeviceKey(), current.provisionDeviceKey())
                ? CompletableFuture.completedFuture(null)
                : claimKey(next.provisionDeviceKey(), id)
                    .handle(
                        (keyed, error) -> {
                          if (error == null) {
                            return CompletableFuture.<Void>completedFuture(null);
                          }
                          CompletionStage<Void> undo =
                              next.name().equals(current.name())
                                  ? CompletableFuture.completedFuture(null)
                                  : releaseUnlessHeld(names, next.name(), next.id());
                          return undo.<Void>thenApply(
                              released -> {
                                throw rethrown(error);
                              });
                        })
                    .thenCompose(stage -> stage));
  }

  // The claims of {@code old} that {@code kept} does not have, released unless the row holds them.
  private CompletionStage<Void> releaseOld(DeviceProfile old, DeviceProfile kept) {
    CompletionStage<Void> name =
        old.name().equals(kept.name())
            ? CompletableFuture.completedFuture(null)
            : releaseUnlessHeld(names, old.name(), old.id());
    String oldKey = old.provisionDeviceKey();
    return name.thenCompose(
        done ->
            oldKey == null || oldKey.equals(kept.provisionDeviceKey())
                ? CompletableFuture.completedFuture(null)
                : releaseUnlessHeld(keys, oldKey, old.id()));
  }

  private CompletionStage<Void> claimKey(@Nullable String key, UUID id) {
    return key == null
        ? CompletableFuture.completedFuture(null)
        : claim(keys, "provisionDeviceKey", key, id, "provisionDeviceKey");
  }

  /**
   * Reserves {@code value} for the profile; a claim whose owner's row does not hold the value is
   * taken over. Fails with {@link DeviceConflictException} when another profile holds it.
   */
  CompletionStage<Void> claim(
      ProfileClaims claims, String field, String value, UUID id, String what) {
    return claims
        .reserve(value, id)
        .thenCompose(
            owner -> {
              if (owner.equals(id)) {
                return CompletableFuture.<Void>completedFuture(null);
              }
              return table
                  .load(new DeviceProfileId(owner))
                  .thenCompose(
                      row -> {
                        if (row.isPresent() && holds(row.get(), field, value)) {
                          throw new DeviceConflictException(what + " '" + value + "' is taken");
                        }
                        // A claim left by an interrupted write: take it over, once.
                        return claims
                            .release(value, owner)
                            .thenCompose(released -> claims.reserve(value, id))
                            .thenApply(
                                now -> {
                                  if (!now.equals(id)) {
                                    throw new DeviceConflictException(
                                        what + " '" + value + "' is taken");
                                  }
                                  return null;
                                });
                      });
            });
  }

  private static boolean holds(ProfileRow row, String field, String value) {
    return field.equals("name")
        ? row.profile().name().equals(value)
        : value.equals(row.profile().provisionDeviceKey());
  }

  /** Releases the profile's claim on {@code value} unless its row holds the value now. */
  CompletionStage<Void> releaseUnlessHeld(ProfileClaims claims, String value, DeviceProfileId id) {
    String field = claims == names ? "name" : "provisionDeviceKey";
    return table
        .load(id)
        .thenCompose(
            row ->
                row.isPresent() && holds(row.get(), field, value)
                    ? CompletableFuture.completedFuture(null)
                    : claims.release(value, id.value()));
  }

  // The secret the profile will have: the draft's, hashed with a new salt, or the current one.
  private @Nullable ProvisionSecret secret(
      DeviceProfileDraft draft, @Nullable ProvisionSecret current) {
    String given = draft.provisionDeviceSecret();
    ProvisionSecret secret = given != null ? ProvisionSecret.hash(given, random) : current;
    if (secret == null && draft.provisionType() != ProvisionType.DISABLED) {
      throw new IllegalArgumentException(
          "provisionDeviceSecret is required when provisionType is " + draft.provisionType());
    }
    return secret;
  }

  private static DeviceProfile profile(
      DeviceProfileId id,
      DeviceProfileDraft draft,
      @Nullable ProvisionSecret secret,
      long createdTime) {
    return new DeviceProfile(
        id,
        draft.name(),
        draft.type(),
        draft.transportType(),
        draft.provisionType(),
        draft.provisionDeviceKey(),
        secret,
        draft.description(),
        draft.isDefault(),
        createdTime);
  }

  private static RuntimeException rethrown(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    return cause instanceof RuntimeException runtime ? runtime : new CompletionException(cause);
  }
}
