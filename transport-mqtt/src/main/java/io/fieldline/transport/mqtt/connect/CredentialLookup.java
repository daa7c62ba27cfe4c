package io.fieldline.transport.mqtt.connect;

import io.fieldline.common.CertificateFingerprint;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.MqttBasicLogin;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.jspecify.annotations.Nullable;

/**
 * Which of ThingsBoard's three credentials a CONNECT presents, and the lookup that finds its device
 * (docs/mqtt-api.md, "Credentials"):
 *
 * <ol>
 *   <li>a client certificate from the TLS handshake ({@code X509_CERTIFICATE}) decides alone: the
 *       user name and password are not looked at;
 *   <li>otherwise a user name is first tried as an access token ({@code ACCESS_TOKEN}, the common
 *       case, served from the registry's cache), then as an {@code MQTT_BASIC} credential with the
 *       client id and password;
 *   <li>without a user name, the client id alone may name an {@code MQTT_BASIC} credential.
 * </ol>
 *
 * Stateless.
 */
final class CredentialLookup {

  private CredentialLookup() {}

  /**
   * Starts the lookup for a CONNECT.
   *
   * @param certificate the client certificate, or null
   * @return the device found (or not), or null if the CONNECT presents nothing to look up
   */
  static @Nullable CompletionStage<Optional<Device>> start(
      DeviceRegistry registry, MqttConnectMessage connect, @Nullable X509Certificate certificate) {
    if (certificate != null) {
      try {
        return registry.findByCertificate(CertificateFingerprint.sha256(certificate.getEncoded()));
      } catch (CertificateEncodingException e) {
        return CompletableFuture.completedFuture(Optional.empty());
      }
    }
    String userName = connect.variableHeader().hasUserName() ? connect.payload().userName() : null;
    String clientId = connect.payload().clientIdentifier();
    byte[] password =
        connect.variableHeader().hasPassword() ? connect.payload().passwordInBytes() : null;
    MqttBasicLogin login =
        new MqttBasicLogin(
            clientId.isEmpty() ? null : clientId,
            userName == null || userName.isEmpty() ? null : userName,
            password);
    if (login.userName() != null) {
      String token = login.userName();
      return registry
          .findByToken(token)
          .thenCompose(
              found ->
                  found.isPresent()
                      ? CompletableFuture.completedFuture(found)
                      : registry.findByBasicCredentials(login));
    }
    if (login.clientId() != null) {
      return registry.findByBasicCredentials(login);
    }
    return null;
  }

  /** The certificate the client presented in the TLS handshake, or null (none, or no TLS). */
  static @Nullable X509Certificate clientCertificate(ChannelPipeline pipeline) {
    SslHandler ssl = pipeline.get(SslHandler.class);
    if (ssl == null) {
      return null;
    }
    try {
      Certificate[] chain = ssl.engine().getSession().getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? leaf : null;
    } catch (SSLPeerUnverifiedException noCertificate) {
      return null;
    }
  }
}
