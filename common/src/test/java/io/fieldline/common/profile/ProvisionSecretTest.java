package io.fieldline.common.profile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

/** The salted hash a provision secret is kept as. */
class ProvisionSecretTest {

  private final SecureRandom random = new SecureRandom();

  @Test
  void should_match_only_the_secret_when_checked() {
    ProvisionSecret secret = ProvisionSecret.hash("s3cret-value", random);

    assertThat(secret.matches("s3cret-value")).isTrue();
    assertThat(secret.matches("s3cret-valuE")).isFalse();
    assertThat(secret.matches("")).isFalse();
    assertThat(secret.toString()).doesNotContain("s3cret");
  }

  @Test
  void should_salt_each_hash_when_the_same_secret_is_hashed_twice() {
    ProvisionSecret first = ProvisionSecret.hash("same", random);
    ProvisionSecret second = ProvisionSecret.hash("same", random);

    assertThat(first.hash()).isNotEqualTo(second.hash());
    assertThat(first.salt()).isNotEqualTo(second.salt());
  }

  @Test
  void should_match_as_before_when_read_back_from_storage() {
    ProvisionSecret secret = ProvisionSecret.hash("stored", random);

    ProvisionSecret read = ProvisionSecret.stored(secret.salt(), secret.hash());

    assertThat(read).isEqualTo(secret);
    assertThat(read.matches("stored")).isTrue();
    assertThatThrownBy(() -> ProvisionSecret.stored(new byte[3], secret.hash()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void should_refuse_a_profile_that_provisions_without_a_key_when_drafted() {
    assertThatThrownBy(
            () ->
                new DeviceProfileDraft(
                    "p",
                    "DEFAULT",
                    "DEFAULT",
                    ProvisionType.ALLOW_CREATE_NEW_DEVICES,
                    null,
                    "secret",
                    null,
                    false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("provisionDeviceKey is required");
    assertThatThrownBy(
            () ->
                new DeviceProfileDraft(
                    " ", "DEFAULT", "DEFAULT", ProvisionType.DISABLED, null, null, null, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name must not be blank");
    assertThatThrownBy(
            () ->
                new DeviceProfileDraft(
                    "p", "DEFAULT", "DEFAULT", ProvisionType.DISABLED, null, "", null, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("provisionDeviceSecret must have");
  }

  @Test
  void should_admit_provisioning_only_when_enabled_and_the_secret_matches() {
    ProvisionSecret secret = ProvisionSecret.hash("right", random);
    DeviceProfile enabled =
        new DeviceProfile(
            DeviceProfileId.random(),
            "p",
            "DEFAULT",
            "DEFAULT",
            ProvisionType.CHECK_PRE_PROVISIONED_DEVICES,
            "key",
            secret,
            null,
            false,
            1L);
    DeviceProfile disabled =
        new DeviceProfile(
            DeviceProfileId.random(),
            "q",
            "DEFAULT",
            "DEFAULT",
            ProvisionType.DISABLED,
            "key2",
            secret,
            null,
            false,
            1L);

    assertThat(enabled.admitsProvisioning("right")).isTrue();
    assertThat(enabled.admitsProvisioning("wrong")).isFalse();
    assertThat(disabled.admitsProvisioning("right")).isFalse();
  }
}
