package io.fieldline.common.provision;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.DeviceCredentials;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a provisioning request, rendered by {@link #toJson} in ThingsBoard's shape:
 *
 * <ul>
 *   <li>{@code {"status":"SUCCESS","credentialsType":"ACCESS_TOKEN","credentialsValue":"<token>"}};
 *       for {@code MQTT_BASIC} the value is {@code {"clientId":..,"userName":..,"password":..}},
 *       for {@code X509_CERTIFICATE} the certificate's Base64 body (no BEGIN/END lines, no line
 *       breaks);
 *   <li>{@code {"status":"NOT_FOUND","errorMsg":"Provision data was not found!"}};
 *   <li>{@code {"status":"FAILURE","errorMsg":"..."}}: ThingsBoard's {@value #FAILED} where
 *       ThingsBoard answers so, a sentence naming the cause for Fieldline's own refusals.
 * </ul>
 *
 * @param status the outcome
 * @param errorMsg why, when not {@code SUCCESS}
 * @param deviceId the provisioned device, when {@code SUCCESS}
 * @param credentials its credential, when {@code SUCCESS}; an MQTT_BASIC password is the one the
 *     device sent, null when the answer comes from the stored credential (only a hash is kept)
 */
public record ProvisionResponse(
    ProvisionStatus status,
    @Nullable String errorMsg,
    @Nullable DeviceId deviceId,
    @Nullable DeviceCredentials credentials) {

  /** ThingsBoard's {@code errorMsg} of {@code NOT_FOUND}. */
  public static final String NOT_FOUND_MESSAGE = "Provision data was not found!";

  /** ThingsBoard's {@code errorMsg} of {@code FAILURE}. */
  public static final String FAILED = "Failed to provision device!";

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String BEGIN = "-----BEGIN CERTIFICATE-----";
  private static final String END = "-----END CERTIFICATE-----";

  public ProvisionResponse {
    Objects.requireNonNull(status, "status");
    if (status == ProvisionStatus.SUCCESS) {
      Objects.requireNonNull(deviceId, "deviceId");
      Objects.requireNonNull(credentials, "credentials");
    } else {
      Objects.requireNonNull(errorMsg, "errorMsg");
    }
  }

  /** {@code NOT_FOUND}: no profile provisions with this key and secret. */
  public static ProvisionResponse notFound() {
    return new ProvisionResponse(ProvisionStatus.NOT_FOUND, NOT_FOUND_MESSAGE, null, null);
  }

  /** {@code FAILURE} with ThingsBoard's message. */
  public static ProvisionResponse failed() {
    return failed(FAILED);
  }

  /** {@code FAILURE} with {@code message}. */
  public static ProvisionResponse failed(String message) {
    return new ProvisionResponse(ProvisionStatus.FAILURE, message, null, null);
  }

  /** {@code SUCCESS}: the device and the credential it connects with. */
  public static ProvisionResponse success(DeviceId deviceId, DeviceCredentials credentials) {
    return new ProvisionResponse(ProvisionStatus.SUCCESS, null, deviceId, credentials);
  }

  /** The answer as ThingsBoard devices read it. */
  public byte[] toJson() {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("status", status.name());
    if (status != ProvisionStatus.SUCCESS) {
      node.put("errorMsg", errorMsg);
    } else {
      DeviceCredentials value = Objects.requireNonNull(credentials);
      node.put("credentialsType", value.type().name());
      if (value instanceof DeviceCredentials.AccessToken token) {
        node.put("credentialsValue", token.token());
      } else if (value instanceof DeviceCredentials.MqttBasic basic) {
        ObjectNode basicValue = node.putObject("credentialsValue");
        basicValue.put("clientId", basic.clientId());
        basicValue.put("userName", basic.userName());
        basicValue.put("password", basic.password());
      } else if (value instanceof DeviceCredentials.X509Certificate certificate) {
        node.put("credentialsValue", base64Body(certificate.pem()));
      }
    }
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render JSON", e);
    }
  }

  private static String base64Body(String pem) {
    return pem.replace(BEGIN, "").replace(END, "").replaceAll("\\s", "");
  }

  /** Never prints the credential. */
  @Override
  public String toString() {
    return "ProvisionResponse[status="
        + status
        + ", errorMsg="
        + errorMsg
        + ", deviceId="
        + deviceId
        + ", credentialsType="
        + (credentials == null ? null : credentials.type())
        + "]";
  }
}
