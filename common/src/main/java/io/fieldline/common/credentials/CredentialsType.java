package io.fieldline.common.credentials;

/** The kinds of device credential, ThingsBoard's names (a device has exactly one). */
public enum CredentialsType {
  /** The access token is the MQTT user name; no password. */
  ACCESS_TOKEN,
  /** MQTT client id and/or user name, with an optional password (stored hashed). */
  MQTT_BASIC,
  /** A device certificate presented in the TLS handshake, found by its fingerprint. */
  X509_CERTIFICATE
}
