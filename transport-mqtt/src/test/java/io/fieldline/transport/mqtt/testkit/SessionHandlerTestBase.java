package io.fieldline.transport.mqtt.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.device.Device;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/**
 * Shared set-up for the session handler tests: the production pipeline in an EmbeddedChannel with
 * fake ports whose futures each test completes.
 */
public abstract class SessionHandlerTestBase {

  protected static final String TOKEN = "token-A1";

  private final List<SessionClient> clients = new ArrayList<>();

  @AfterEach
  protected void closeClients() {
    clients.forEach(SessionClient::close);
  }

  protected SessionFixture fixture(String... overrides) {
    SessionFixture fixture = new SessionFixture(TestConfigs.mqtt(overrides));
    fixture.registry.add(TOKEN);
    return fixture;
  }

  protected SessionClient open(SessionFixture fixture) {
    SessionClient client = fixture.open();
    clients.add(client);
    return client;
  }

  /** The device of {@link #TOKEN} in {@code fixture}. */
  protected static Device device(SessionFixture fixture) {
    return fixture.registry.findByToken(TOKEN).toCompletableFuture().join().orElseThrow();
  }

  protected SessionClient connected(SessionFixture fixture) {
    SessionClient client = open(fixture);
    assertThat(client.connect(TOKEN)).isEqualTo("CONNACK 0x00");
    return client;
  }
}
