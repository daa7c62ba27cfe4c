package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.CredentialsRevocation;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceConflictException;
import io.fieldline.common.DeviceCredentials;
import io.fieldline.common.DeviceCredentialsStore;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.MqttBasicLogin;
import io.fieldline.common.StoreException;
import io.fieldline.common.StoredCredentials;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Directives;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A credential replacement and a device delete over HTTP against a store whose answer each test
 * chooses: the device is revoked whatever the outcome, since a change that failed (a timeout, 503)
 * may still have been applied. The routes are served by a real Pekko HTTP listener on 127.0.0.1
 * (port 0), without the bearer check in front of them ({@code AuthRoutesIT} covers that).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CredentialChangeRoutesTest {

  private final DeviceId device = DeviceId.random();
  private final List<DeviceId> revoked = new CopyOnWriteArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private volatile CompletionStage<Optional<StoredCredentials>> replaceAnswer;
  private volatile CompletionStage<Boolean> deleteAnswer;
  private ActorSystem<Void> system;
  private ServerBinding binding;

  @BeforeAll
  void bind() {
    system = ActorSystem.create(Behaviors.empty(), "credential-change-routes-test");
    CredentialsRevocation revocation =
        id -> {
          revoked.add(id);
          return CompletableFuture.completedFuture(null);
        };
    binding =
        Http.get(system)
            .newServerAt("127.0.0.1", 0)
            .bind(
                Directives.pathPrefix(
                    "api",
                    () ->
                        Directives.concat(
                            new CredentialsRoutes(new AnsweringStore(), revocation).routes(),
                            new DeviceRoutes(new AnsweringRegistry(), revocation).routes())))
            .toCompletableFuture()
            .join();
  }

  @AfterAll
  void unbind() {
    binding.unbind().toCompletableFuture().join();
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().join();
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
    return send(
        HttpRequest.newBuilder(uri("/api/device/credentials"))
            .header("Content-Type", "application/json")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"deviceId\":{\"entityType\":\"DEVICE\",\"id\":\""
                        + device
                        + "\"},\"credentialsType\":\"ACCESS_TOKEN\",\"credentialsId\":\"t-2\"}")));
  }

  private HttpResponse<String> delete() {
    return send(HttpRequest.newBuilder(uri("/api/device/" + device)).DELETE());
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

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path);
  }

  private HttpResponse<String> send(HttpRequest.Builder request) {
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
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
    public CompletionStage<java.util.Optional<io.fieldline.common.Device>> findByName(String name) {
      throw new UnsupportedOperationException("findByName");
    }

    @Override
    public CompletionStage<java.util.Optional<io.fieldline.common.Device>> update(
        io.fieldline.common.DeviceUpdate update) {
      throw new UnsupportedOperationException("update");
    }

    @Override
    public CompletionStage<io.fieldline.common.PageData<io.fieldline.common.Device>> page(
        io.fieldline.common.DevicePageQuery query) {
      throw new UnsupportedOperationException("page");
    }

    @Override
    public CompletionStage<Boolean> delete(DeviceId id) {
      return deleteAnswer;
    }
  }
}
