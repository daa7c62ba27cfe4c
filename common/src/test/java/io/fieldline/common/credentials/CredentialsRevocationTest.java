package io.fieldline.common.credentials;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link CredentialsRevocation#revokeAfter}: revoked whatever the change's outcome, and after it.
 */
class CredentialsRevocationTest {

  private final List<DeviceId> revoked = new ArrayList<>();
  private final CompletableFuture<Void> revocationDone = new CompletableFuture<>();
  private final CredentialsRevocation revocation =
      device -> {
        revoked.add(device);
        return revocationDone;
      };
  private final DeviceId device = DeviceId.random();

  @Test
  void should_revoke_and_then_answer_the_result_when_the_change_succeeds() {
    CompletableFuture<String> change = new CompletableFuture<>();

    CompletableFuture<String> answer = revocation.revokeAfter(device, change).toCompletableFuture();
    assertThat(revoked).as("not before the change is done").isEmpty();
    change.complete("stored");
    assertThat(revoked).containsExactly(device);
    assertThat(answer).as("not before the revocation is done").isNotDone();
    revocationDone.complete(null);

    assertThat(answer).isCompletedWithValue("stored");
  }

  @Test
  void should_revoke_and_then_answer_the_failure_when_the_change_fails() {
    StoreException timeout = new StoreException(StoreException.Kind.TIMEOUT, "may be applied");

    CompletableFuture<String> answer =
        revocation
            .revokeAfter(device, CompletableFuture.<String>failedFuture(timeout))
            .toCompletableFuture();
    assertThat(revoked).containsExactly(device);
    assertThat(answer).isNotDone();
    revocationDone.complete(null);

    assertThatThrownBy(answer::join).hasCause(timeout);
  }
}
