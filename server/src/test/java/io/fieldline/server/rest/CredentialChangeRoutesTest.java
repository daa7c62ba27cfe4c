package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A credential replacement and a device delete over HTTP against a store whose answer each test
 * chooses: the device is revoked whatever the outcome, since a change that failed (a timeout, 503)
 * may still have been applied. The routes are served by a real Pekko HTTP listener on 127.0.0.1
 * (port 0), without the bearer check in front of them ({@code AuthRoutesIT} covers that).
 */
class CredentialChangeRoutesTest extends RoutesTestBase {

  private final DeviceId device = DeviceId.random();
  private final List<DeviceId> revoked = new CopyOnWriteArrayList<>();
  private volatile CompletionStage<Optional<StoredCredentials>> replaceAnswer;
  private volatile CompletionStage<Boolean> deleteAnswer;

  @Override
  Route routes() {
    CredentialsRevocation revocation =
        id -> {
          revoked.add(id);
          return CompletableFuture.completedFuture(null);
        };
    return Directives.concat(
        new CredentialsRoutes(
                new AnsweringStore(),
                revocation,
                new CredentialRefusals(
                    new io.micrometer.core.instrument.simple.SimpleMeterRegistry()))
            .routes(),
        new DeviceRoutes(new AnsweringRegistry(), revocation).routes());
  }

  @BeforeEach
  void clear() {
    revoked.clear();
  }

  private static CompletionStage<Optional<StoredCredentials>> timedOut() {
    return CompletableFuture.failedFuture(
        new StoreException(StoreException.Kind.TIMEOUT, "the lightweight transaction timed out"));
  }

  private HttpResponse<String> replace() {
    return post(
        "/api/device/credentials",
        "{\"deviceId\":{\"entityType\":\"DEVICE\",\"id\":\""
            + device
            + "\"},\"credentialsType\":\"ACCESS_TOKEN\",\"credentialsId\":\"t-2\"}");
  }

  private HttpResponse<String> delete() {
    return delete("/api/device/" + device);
  }

  @Test
  void should_revoke_the_device_when_a_replacement_times_out() {
    replaceAnswer = timedOut();

    assertThat(replace().statusCode()).isEqualTo(503);
    assertThat(revoked).containsExactly(device);
  }

  @Test
  void should_revoke_the_device_when_a_replacement_is_refused_or_finds_no_device() {
    replaceAnswer = CompletableFuture.failedFuture(new DeviceConflictException("changed"));
    assertThat(replace().statusCode()).isEqualTo(409);
    replaceAnswer = CompletableFuture.completedFuture(Optional.empty());
    assertThat(replace().statusCode()).isEqualTo(404);

    assertThat(revoked).containsExactly(device, device);
  }

  @Test
  void should_revoke_the_device_when_a_delete_times_out() {
    deleteAnswer =
        CompletableFuture.failedFuture(
            new StoreException(StoreException.Kind.TIMEOUT, "the batch timed out"));

    assertThat(delete().statusCode()).isEqualTo(503);
    assertThat(revoked).containsExactly(device);
  }

  @Test
  void should_revoke_the_device_when_a_delete_finds_no_device() {
    deleteAnswer = CompletableFuture.completedFuture(false);

    assertThat(delete().statusCode()).isEqualTo(404);
    assertThat(revoked).containsExactly(device);
  }

  /** Answers a replacement with {@link #replaceAnswer}; nothing else is called. */
  private final class AnsweringStore implements DeviceCredentialsStore {
    @Override
    public CompletionStage<Optional<StoredCredentials>> findCredentials(DeviceId id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<StoredCredentials>> replaceCredentials(
        DeviceId id, DeviceCredentials credentials) {
      return replaceAnswer;
    }

    @Override
    public CompletionStage<Device> createWithCredentials(
        String name, String type, DeviceCredentials credentials) {
      throw new UnsupportedOperationException();
    }
  }

  /** Answers a delete with {@link #deleteAnswer}; nothing else is called. */
  private final class AnsweringRegistry implements DeviceRegistry {
    @Override
    public CompletionStage<Optional<Device>> findByToken(String token) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<Device>> findById(DeviceId id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Device> create(String name, String type, Optional<String> token) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<java.util.Optional<io.fieldline.common.device.Device>> findByName(
        String name) {
      throw new UnsupportedOperationException("findByName");
    }

    @Override
    public CompletionStage<java.util.Optional<io.fieldline.common.device.Device>> update(
        io.fieldline.common.device.DeviceUpdate update) {
      throw new UnsupportedOperationException("update");
    }

    @Override
    public CompletionStage<io.fieldline.common.query.PageData<io.fieldline.common.device.Device>>
        page(io.fieldline.common.query.DevicePageQuery query) {
      throw new UnsupportedOperationException("page");
    }

    @Override
    public CompletionStage<Boolean> delete(DeviceId id) {
      return deleteAnswer;
    }
  }
}
