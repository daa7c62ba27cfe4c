package io.fieldline.dao.cassandra.registry;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CertificateFingerprint;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.dao.cassandra.CassandraTestBase;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The three credential types against a real Cassandra: each MQTT_BASIC form, passwords, X.509,
 * replacement between types, conflicts, deletes, and rows written before schema version 3. The
 * certificates are test fixtures made with {@code openssl req -x509 -newkey ec}.
 */
class CassandraCredentialsIT extends CassandraTestBase {

  private CassandraDeviceRegistry registry;
  private PasswordHashing passwords;
  private DeviceTable table;
  private CredentialWrites writes;
  private DeviceDeletion deletion;

  @Override
  protected String extraConfig() {
    // bcrypt's lowest cost: the tests check behaviour, not cost.
    return "fieldline.cassandra.password-hashing.cost = 4";
  }

  @BeforeAll
  void createRegistry() {
    registry = new CassandraDeviceRegistry(session, config);
    // The steps of a replacement and of a delete on their own, to run them in a chosen order.
    passwords = new PasswordHashing(config.passwordHashing());
    table = new DeviceTable(session, keyspace);
    CredentialIndex index = new CredentialIndex(session, keyspace);
    writes = new CredentialWrites(table, index, passwords);
    deletion = new DeviceDeletion(table, index, new DeviceNames(session, keyspace));
  }

  @AfterAll
  void closeRegistry() {
    registry.close();
    passwords.close();
  }

  @BeforeEach
  void cleanTables() {
    truncate("devices", "device_by_token", "device_by_name", "device_by_credentials");
  }

  private static DeviceCredentials.MqttBasic basic(
      @Nullable String clientId, @Nullable String userName, @Nullable String password) {
    return new DeviceCredentials.MqttBasic(clientId, userName, password);
  }

  private static DeviceCredentials.X509Certificate certificate(String name) {
    try (InputStream in =
        CassandraCredentialsIT.class.getResourceAsStream("/certificates/" + name + ".pem")) {
      return DeviceCredentials.X509Certificate.parse(
          new String(Objects.requireNonNull(in).readAllBytes(), StandardCharsets.US_ASCII));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private Device create(String name, DeviceCredentials credentials) {
    return await(registry.createWithCredentials(name, "sensor", credentials));
  }

  private Optional<Device> login(
      @Nullable String clientId, @Nullable String userName, @Nullable String password) {
    return await(
        registry.findByBasicCredentials(
            new MqttBasicLogin(
                clientId,
                userName,
                password == null ? null : password.getBytes(StandardCharsets.UTF_8))));
  }

  private StoredCredentials replace(Device device, DeviceCredentials credentials) {
    return await(registry.replaceCredentials(device.id(), credentials)).orElseThrow();
  }

  private static Throwable failureOf(CompletionStage<?> stage) {
    try {
      stage.toCompletableFuture().join();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("expected a failure");
  }

  @Test
  void should_find_a_device_by_each_basic_form_when_the_password_matches() {
    Device both = create("both", basic("c1", "u1", "p1"));
    Device clientOnly = create("client-only", basic("c2", null, null));
    Device userOnly = create("user-only", basic(null, "u3", "p3"));

    assertThat(both.accessToken()).as("no token for a basic device").isNull();
    assertThat(login("c1", "u1", "p1")).contains(both);
    assertThat(login("c1", "u1", "wrong")).isEmpty();
    assertThat(login("c1", "u1", null)).isEmpty();
    assertThat(login("c1", "other", "p1")).as("user name is part of the credential").isEmpty();
    assertThat(login("c2", null, null)).contains(clientOnly);
    assertThat(login("c2", "any-user", "any-password")).contains(clientOnly);
    assertThat(login("any-client", "u3", "p3")).contains(userOnly);
    assertThat(login(null, "u3", "p3")).contains(userOnly);
    assertThat(login("any-client", "u3", "p1")).isEmpty();
  }

  @Test
  void should_match_any_password_when_the_basic_credential_has_none() {
    Device device = create("open", basic("c", "u", null));

    assertThat(login("c", "u", "whatever")).contains(device);
    assertThat(login("c", "u", null)).contains(device);
  }

  @Test
  void should_try_the_next_form_when_the_password_of_the_first_does_not_match() {
    Device pair = create("pair", basic("c", "u", "pair-password"));
    Device user = create("user", basic(null, "u", "user-password"));

    assertThat(login("c", "u", "pair-password")).contains(pair);
    assertThat(login("c", "u", "user-password")).contains(user);
  }

  @Test
  void should_store_a_bcrypt_hash_and_never_the_password() {
    Device device = create("hashed", basic("c", "u", "clear-text-password"));

    Row row =
        session
            .execute(
                "SELECT mqtt_password_hash, mqtt_client_id FROM "
                    + keyspace
                    + ".devices WHERE id = ?",
                device.id().value())
            .one();
    assertThat(Objects.requireNonNull(row).getString("mqtt_password_hash"))
        .startsWith("$2b$04$")
        .doesNotContain("clear-text-password");
    StoredCredentials stored = await(registry.findCredentials(device.id())).orElseThrow();
    assertThat(stored.credentials()).isEqualTo(basic("c", "u", null));
  }

  @Test
  void should_find_a_device_by_its_certificate_fingerprint() {
    DeviceCredentials.X509Certificate cert = certificate("device-c-ca-signed");
    Device device = create("x509", cert);

    assertThat(await(registry.findByCertificate(cert.fingerprint()))).contains(device);
    assertThat(await(registry.findByCertificate(certificate("device-a").fingerprint()))).isEmpty();
    StoredCredentials stored = await(registry.findCredentials(device.id())).orElseThrow();
    assertThat(stored.credentialsId()).isEqualTo(cert.fingerprint());
    assertThat(stored.credentials()).isEqualTo(cert);
    assertThat(cert.fingerprint())
        .isEqualTo(
            CertificateFingerprint.sha256(
                java.util.Base64.getMimeDecoder()
                    .decode(
                        cert.pem()
                            .replace("-----BEGIN CERTIFICATE-----", "")
                            .replace("-----END CERTIFICATE-----", ""))));
  }

  @Test
  void should_fail_with_conflict_when_another_device_holds_the_credential() {
    create("first", basic("c", "u", "p"));
    create("cert", certificate("device-a"));
    Device token = await(registry.create("token", "sensor", Optional.of("token-a")));

    assertThat(failureOf(registry.createWithCredentials("second", "t", basic("c", "u", "q"))))
        .isInstanceOf(DeviceConflictException.class);
    assertThat(failureOf(registry.replaceCredentials(token.id(), basic("c", "u", null))))
        .isInstanceOf(DeviceConflictException.class);
    assertThat(failureOf(registry.replaceCredentials(token.id(), certificate("device-a"))))
        .isInstanceOf(DeviceConflictException.class);
    assertThat(await(registry.findByToken("token-a")))
        .as("a refused replacement keeps the old credential")
        .contains(token);
    assertThat(create("second", basic("c", "other", "q")).name())
        .as("the refused create released its name")
        .isEqualTo("second");
  }

  @Test
  void should_remove_the_old_lookup_when_replacing_across_every_type() {
    Device device = await(registry.create("shifter", "sensor", Optional.of("token-1")));
    DeviceCredentials.X509Certificate cert = certificate("device-b");

    StoredCredentials asBasic = replace(device, basic("c", "u", "p"));
    assertThat(asBasic.credentials().type()).isEqualTo(CredentialsType.MQTT_BASIC);
    assertThat(await(registry.findByToken("token-1"))).isEmpty();
    assertThat(login("c", "u", "p")).map(Device::id).contains(device.id());
    assertThat(await(registry.findById(device.id())).orElseThrow().accessToken()).isNull();

    replace(device, cert);
    assertThat(login("c", "u", "p")).isEmpty();
    assertThat(await(registry.findByCertificate(cert.fingerprint())))
        .map(Device::id)
        .contains(device.id());

    replace(device, new DeviceCredentials.AccessToken("token-2"));
    assertThat(await(registry.findByCertificate(cert.fingerprint()))).isEmpty();
    assertThat(await(registry.findByToken("token-2"))).map(Device::id).contains(device.id());

    // Every old credential is free again for another device.
    assertThat(create("reuse-basic", basic("c", "u", null)).name()).isEqualTo("reuse-basic");
    assertThat(create("reuse-cert", cert).name()).isEqualTo("reuse-cert");
    assertThat(await(registry.create("reuse-token", "t", Optional.of("token-1"))).name())
        .isEqualTo("reuse-token");
  }

  @Test
  void should_keep_the_password_when_a_replacement_has_none_whatever_the_ids() {
    Device device = create("keeper", basic("c", "u", "secret"));

    replace(device, basic("c", "u", null));
    assertThat(login("c", "u", "secret")).as("kept").map(Device::id).contains(device.id());
    assertThat(login("c", "u", "anything")).isEmpty();

    // What a GET shows (password null), posted back with other ids: the password stays.
    replace(device, basic("c", "u2", null));
    assertThat(login("c", "u2", "anything")).as("not opened to any password").isEmpty();
    assertThat(login("c", "u2", "secret")).map(Device::id).contains(device.id());
    replace(device, basic(null, "u3", null));
    assertThat(login("any-client", "u3", "anything")).isEmpty();
    assertThat(login("any-client", "u3", "secret")).map(Device::id).contains(device.id());

    replace(device, basic("c", "u", "changed"));
    assertThat(login("c", "u", "secret")).isEmpty();
    assertThat(login("c", "u", "changed")).map(Device::id).contains(device.id());

    replace(device, basic("c", "u", ""));
    assertThat(login("c", "u", "anything")).as("empty: no password").isPresent();
    replace(device, basic("c", "u4", null));
    assertThat(login("c", "u4", "anything")).as("null, nothing to keep: no password").isPresent();
  }

  @Test
  void should_have_no_password_when_a_token_is_replaced_by_basic_credentials_without_one() {
    Device device = await(registry.create("was-token", "sensor", Optional.of("token-p")));

    replace(device, basic("c", "u", null));

    assertThat(login("c", "u", "anything")).map(Device::id).contains(device.id());
  }

  @Test
  void should_refuse_to_keep_a_password_when_the_replacement_has_no_user_name() {
    Device device = create("no-user", basic("c", "u", "secret"));

    assertThat(failureOf(registry.replaceCredentials(device.id(), basic("c", null, null))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("userName");
    assertThat(login("c", "u", "secret")).as("unchanged").map(Device::id).contains(device.id());

    replace(device, basic("c", null, ""));
    assertThat(login("c", "any-user", "anything")).map(Device::id).contains(device.id());
  }

  @Test
  void should_answer_empty_and_write_nothing_when_the_device_does_not_exist() {
    DeviceId unknown = DeviceId.random();

    assertThat(await(registry.replaceCredentials(unknown, basic("c", "u", "p")))).isEmpty();
    assertThat(await(registry.findCredentials(unknown))).isEmpty();
    assertThat(create("later", basic("c", "u", "p")).name()).isEqualTo("later");
  }

  @Test
  void should_refuse_a_replacement_when_the_row_changed_since_it_was_read() {
    Device device = create("raced", basic("c", "u", "p"));
    DeviceTable.DeviceRow stale = await(table.load(device.id().value())).orElseThrow();

    replace(device, basic("c", "u", "newer"));

    assertThat(await(table.replaceCredentials(stale, CredentialColumns.token("late")))).isFalse();
    assertThat(login("c", "u", "newer")).map(Device::id).contains(device.id());
  }

  @Test
  void should_keep_the_new_key_indexed_when_two_replacements_of_a_device_target_it() {
    Device device = await(registry.create("twice", "sensor", Optional.of("token-1")));
    DeviceTable.DeviceRow read = await(table.load(device.id().value())).orElseThrow();
    CredentialColumns next = CredentialColumns.token("token-2");

    // Both read the row before either swapped; both reserves succeed (the device owns token-2 once
    // the first has reserved it), the first swap applies and the second fails.
    await(writes.swap(read, next));
    assertThat(failureOf(writes.swap(read, next))).isInstanceOf(DeviceConflictException.class);

    assertThat(await(registry.findByToken("token-2"))).map(Device::id).contains(device.id());
    assertThat(await(registry.findByToken("token-1"))).isEmpty();
  }

  @Test
  void should_keep_the_old_key_indexed_when_the_device_went_back_to_it_before_its_release() {
    Device device = await(registry.create("back", "sensor", Optional.of("token-a")));
    UUID id = device.id().value();
    DeviceTable.DeviceRow first = await(table.load(id)).orElseThrow();
    CredentialColumns tokenB = CredentialColumns.token("token-b");
    // A replacement a -> b has swapped but not yet released a...
    await(writes.reserve(id, tokenB));
    assertThat(await(table.replaceCredentials(first, tokenB))).isTrue();
    // ...when another one, b -> a, runs whole (its reserve of a finds the device's own claim).
    await(writes.swap(await(table.load(id)).orElseThrow(), CredentialColumns.token("token-a")));

    await(writes.releaseUnlessHeld(id, CredentialKey.accessToken("token-a")));

    assertThat(await(registry.findByToken("token-a"))).map(Device::id).contains(device.id());
    assertThat(await(registry.findByToken("token-b"))).isEmpty();
  }

  @Test
  void should_restore_a_lost_index_claim_when_the_same_credential_is_posted_again() {
    Device device = await(registry.create("healed", "sensor", Optional.of("token-h")));
    Device basicDevice = create("healed-basic", basic("c", "u", "p"));
    // What a replacement race (or a hand-made repair gone wrong) could leave: rows, no claims.
    session.execute(
        "DELETE FROM " + keyspace + ".device_by_token WHERE access_token = ?", "token-h");
    session.execute("TRUNCATE " + keyspace + ".device_by_credentials");
    assertThat(await(registry.findByToken("token-h"))).isEmpty();
    assertThat(login("c", "u", "p")).isEmpty();

    replace(device, new DeviceCredentials.AccessToken("token-h"));
    replace(basicDevice, basic("c", "u", null));

    assertThat(await(registry.findByToken("token-h"))).map(Device::id).contains(device.id());
    assertThat(login("c", "u", "p")).map(Device::id).contains(basicDevice.id());
  }

  @Test
  void should_remove_the_credential_rows_when_a_basic_or_x509_device_is_deleted() {
    Device basicDevice = create("basic", basic("c", "u", "p"));
    Device certDevice = create("cert", certificate("device-a"));

    assertThat(await(registry.delete(basicDevice.id()))).isTrue();
    assertThat(await(registry.delete(certDevice.id()))).isTrue();

    assertThat(login("c", "u", "p")).isEmpty();
    assertThat(await(registry.findByCertificate(certificate("device-a").fingerprint()))).isEmpty();
    assertThat(session.execute("SELECT * FROM " + keyspace + ".device_by_credentials").all())
        .isEmpty();
  }

  @Test
  void should_treat_a_row_with_an_unknown_credential_type_as_no_device() {
    Device readable = await(registry.create("readable", "sensor", Optional.of("token-ok")));
    // A row as a later version could write it, with a credential type this one does not know.
    UUID id = UUID.randomUUID();
    session.execute(
        "INSERT INTO "
            + keyspace
            + ".devices (id, name, type, created_time, credentials_type, access_token)"
            + " VALUES (?, 'future', 'sensor', 1, 'LWM2M_CREDENTIALS', 'token-future')",
        id);
    session.execute(
        "INSERT INTO " + keyspace + ".device_by_token (access_token, device_id) VALUES (?, ?)",
        "token-future",
        id);
    long unreadableBefore = registry.unreadableRows();

    assertThat(await(registry.findByToken("token-future"))).isEmpty();
    assertThat(await(registry.findById(new DeviceId(id)))).isEmpty();
    assertThat(registry.scan(100)).as("the start-up scan goes on").containsExactly(readable);
    assertThat(await(registry.findByToken("token-ok"))).contains(readable);
    assertThat(registry.unreadableRows()).isEqualTo(unreadableBefore + 3);
  }

  @Test
  void
      should_release_the_new_credential_when_a_replacement_lands_between_a_deletes_read_and_write() {
    Device device = await(registry.create("deleted", "sensor", Optional.of("token-d1")));
    DeviceTable.DeviceRow readByDelete = await(table.load(device.id().value())).orElseThrow();

    replace(device, new DeviceCredentials.AccessToken("token-d2"));
    assertThat(await(deletion.delete(readByDelete, 1))).isTrue();

    assertThat(await(registry.findById(device.id()))).isEmpty();
    assertThat(session.execute("SELECT * FROM " + keyspace + ".device_by_token").all())
        .as("no claim left behind")
        .isEmpty();
    assertThat(session.execute("SELECT * FROM " + keyspace + ".device_by_name").all()).isEmpty();
    assertThat(await(registry.create("other", "sensor", Optional.of("token-d2"))).name())
        .as("the replacement's credential is free again")
        .isEqualTo("other");
  }

  @Test
  void should_release_the_new_credential_when_a_replacement_swaps_after_the_delete() {
    Device device = create("gone", basic("c", "u", "p"));
    DeviceTable.DeviceRow readByReplacement = await(table.load(device.id().value())).orElseThrow();

    assertThat(await(registry.delete(device.id()))).isTrue();
    assertThat(failureOf(writes.swap(readByReplacement, CredentialColumns.token("token-late"))))
        .isInstanceOf(DeviceConflictException.class);

    assertThat(session.execute("SELECT * FROM " + keyspace + ".device_by_token").all()).isEmpty();
    assertThat(session.execute("SELECT * FROM " + keyspace + ".device_by_credentials").all())
        .isEmpty();
    assertThat(await(registry.findById(device.id()))).as("not resurrected").isEmpty();
  }

  @Test
  void should_answer_not_found_when_the_device_was_deleted_between_a_deletes_read_and_write() {
    Device device = await(registry.create("twice-deleted", "sensor", Optional.of("token-t")));
    DeviceTable.DeviceRow read = await(table.load(device.id().value())).orElseThrow();

    assertThat(await(registry.delete(device.id()))).isTrue();

    assertThat(await(deletion.delete(read, 1))).isFalse();
  }

  @Test
  void should_read_and_replace_a_device_written_before_schema_version_3() {
    // A row as version 1 and 2 wrote it: no credential columns but the token.
    UUID id = UUID.randomUUID();
    session.execute(
        "INSERT INTO "
            + keyspace
            + ".devices (id, name, type, access_token, created_time) VALUES (?, ?, ?, ?, ?)",
        id,
        "old",
        "sensor",
        "old-token",
        1L);
    session.execute(
        "INSERT INTO " + keyspace + ".device_by_token (access_token, device_id) VALUES (?, ?)",
        "old-token",
        id);
    session.execute(
        "INSERT INTO " + keyspace + ".device_by_name (bucket, name, device_id) VALUES (0, ?, ?)",
        "old",
        id);
    Device device = await(registry.findByToken("old-token")).orElseThrow();

    StoredCredentials stored = await(registry.findCredentials(device.id())).orElseThrow();
    assertThat(stored.credentials()).isEqualTo(new DeviceCredentials.AccessToken("old-token"));

    replace(device, basic(null, "u", "p"));
    assertThat(await(registry.findByToken("old-token"))).isEmpty();
    assertThat(login(null, "u", "p")).map(Device::id).contains(new DeviceId(id));
  }
}
