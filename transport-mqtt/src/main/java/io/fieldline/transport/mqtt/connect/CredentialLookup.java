package io.fieldline.transport.mqtt.connect;

import io.fieldline.common.credentials.CertificateFingerprint;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceRegistry;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.ssl.SslHandler;
import java.security.PublicKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.interfaces.DSAKey;
import java.security.interfaces.ECKey;
import java.security.interfaces.RSAKey;
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
 *   <li>a client certificate from the TLS handshake ({@code X509_CERTIFICATE}) that is a device's
 *       credential decides: the user name and password are not looked at;
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

  /** Whether a CONNECT presents anything to look up: a certificate, a user name or a client id. */
  static boolean presentsCredential(
      MqttConnectMessage connect, @Nullable X509Certificate certificate) {
    return certificate != null
        || (connect.variableHeader().hasUserName() && !connect.payload().userName().isEmpty())
        || !connect.payload().clientIdentifier().isEmpty();
  }

  /**
   * Whether a client certificate may be looked up at all: within its validity dates, and with a key
   * no weaker than the JDK's own defaults accept (RSA and DSA 2048 bits, EC 256). The handshake
   * accepted any certificate (devices register self-signed ones), so this is where weak keys are
   * kept out.
   */
  static boolean isAcceptable(X509Certificate certificate) {
    try {
      certificate.checkValidity();
    } catch (CertificateException expiredOrNotYetValid) {
      return false;
    }
    PublicKey key = certificate.getPublicKey();
    if (key instanceof RSAKey rsa) {
      return rsa.getModulus().bitLength() >= 2048;
    }
    if (key instanceof DSAKey dsa) {
      return dsa.getParams() != null && dsa.getParams().getP().bitLength() >= 2048;
    }
    if (key instanceof ECKey ec) {
      return ec.getParams().getOrder().bitLength() >= 256;
    }
    return true; // EdDSA: fixed strength
  }

  /**
   * Starts the lookup for a CONNECT that {@link #presentsCredential presents a credential}. A
   * certificate that matches no device does not end it: a user name or client id given beside it is
   * tried as usual, so a device whose TLS stack happens to carry a certificate keeps connecting
   * with its token.
   *
   * @param certificate the client certificate, or null
   */
  static CompletionStage<Optional<Device>> start(
      DeviceRegistry registry, MqttConnectMessage connect, @Nullable X509Certificate certificate) {
    if (certificate == null) {
      return byName(registry, connect);
    }
    String fingerprint;
    try {
      fingerprint = CertificateFingerprint.sha256(certificate.getEncoded());
    } catch (CertificateEncodingException e) {
      return byName(registry, connect);
    }
    return registry
        .findByCertificate(fingerprint)
        .thenCompose(
            found ->
                found.isPresent()
                    ? CompletableFuture.completedFuture(found)
                    : byName(registry, connect));
  }

  private static CompletionStage<Optional<Device>> byName(
      DeviceRegistry registry, MqttConnectMessage connect) {
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
    return CompletableFuture.completedFuture(Optional.empty());
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
