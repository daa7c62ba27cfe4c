package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.device.DeviceCredentialsStore;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;

/**
 * Device credentials, ThingsBoard-shaped ({@link CredentialsJson}): {@code GET
 * /api/device/{id}/credentials}, {@code POST /api/device/credentials} (replace a device's
 * credential by one of any type) and {@code POST /api/device-with-credentials} (create a device
 * with one).
 *
 * <p>A replacement answers only once it is stored and revoked ({@link CredentialsRevocation}):
 * every node that could be told has forgotten the old credential and closed the device's session.
 * It is revoked whatever the outcome, failures included: one that failed (a timeout, 503) may still
 * have been applied.
 */
final class CredentialsRoutes extends AllDirectives {

  private final DeviceCredentialsStore store;
  private final CredentialsRevocation revocation;
  private final CredentialRefusals refusals;

  CredentialsRoutes(
      DeviceCredentialsStore store, CredentialsRevocation revocation, CredentialRefusals refusals) {
    this.store = store;
    this.revocation = revocation;
    this.refusals = refusals;
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return concat(
        path(
            PathMatchers.segment("device").slash(PathMatchers.uuidSegment()).slash("credentials"),
            uuid -> get(() -> HttpJson.reply(() -> find(new DeviceId(uuid))))),
        path(
            PathMatchers.segment("device").slash("credentials"),
            () ->
                post(
                    () ->
                        entity(
                            Unmarshaller.entityToString(),
                            body -> HttpJson.reply(() -> replace(body))))),
        path(
            PathMatchers.segment("device-with-credentials"),
            () ->
                post(
                    () ->
                        entity(
                            Unmarshaller.entityToString(),
                            body -> HttpJson.reply(() -> createWith(body))))));
  }

  private CompletionStage<HttpResponse> find(DeviceId id) {
    return store
        .findCredentials(id)
        .thenApply(
            found ->
                found
                    .map(stored -> HttpJson.ok(CredentialsJson.view(stored)))
                    .orElseGet(() -> HttpJson.notFound("device")));
  }

  private CompletionStage<HttpResponse> replace(String body) {
    JsonNode json = HttpJson.parseObject(body);
    DeviceId id = CredentialsJson.deviceId(json);
    DeviceCredentials credentials = refusals.check(CredentialsJson.credentials(json));
    return revocation
        .revokeAfter(id, store.replaceCredentials(id, credentials))
        .thenApply(
            replaced ->
                replaced
                    .map(stored -> HttpJson.ok(CredentialsJson.view(stored)))
                    .orElseGet(() -> HttpJson.notFound("device")));
  }

  // {"device":{"name":..,"type":..},"credentials":{"credentialsType":..,...}}: ThingsBoard's
  // SaveDeviceWithCredentialsRequest.
  private CompletionStage<HttpResponse> createWith(String body) {
    JsonNode json = HttpJson.parseObject(body);
    JsonNode device = json.path("device");
    if (!device.isObject() || !json.path("credentials").isObject()) {
      throw new IllegalArgumentException("request body needs a device and a credentials object");
    }
    String name = RequestParams.name("device name", textField(device, "name", "").trim());
    String type = textField(device, "type", "default");
    type = type.isBlank() ? "default" : RequestParams.name("type", type);
    DeviceCredentials credentials =
        refusals.check(CredentialsJson.credentials(json.path("credentials")));
    return store
        .createWithCredentials(name, type, credentials)
        // Other nodes may hold the new credential as a cached unknown: make it usable everywhere.
        .thenCompose(
            created ->
                revocation
                    .revoke(created.id())
                    .thenApply(revoked -> HttpJson.ok(JsonViews.device(created))));
  }

  // A string field of the device object: absent or null is the fallback, another type a 400.
  private static String textField(JsonNode object, String field, String fallback) {
    JsonNode node = object.path(field);
    if (node.isMissingNode() || node.isNull()) {
      return fallback;
    }
    if (!node.isTextual()) {
      throw new IllegalArgumentException("device." + field + " must be a string");
    }
    return node.asText();
  }
}
