package io.fieldline.server.rest;

import io.fieldline.common.credentials.CredentialPolicy;
import io.fieldline.common.credentials.DeviceCredentials;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Applies {@link CredentialPolicy} where the REST API gives a device a credential, and counts each
 * refusal in {@code fieldline.http.credentials.refused{reason}} (the 400 itself is counted and
 * logged, at most one line per 10 s, by {@link RejectedRequests}). Thread-safe.
 */
final class CredentialRefusals {

  static final String REFUSED = "fieldline.http.credentials.refused";

  private final Map<CredentialPolicy.Refusal, Counter> counters =
      new EnumMap<>(CredentialPolicy.Refusal.class);

  CredentialRefusals(MeterRegistry registry) {
    for (CredentialPolicy.Refusal refusal : CredentialPolicy.Refusal.values()) {
      counters.put(
          refusal,
          Counter.builder(REFUSED)
              .description("Device credentials refused at registration")
              .tag("reason", refusal.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
  }

  /** {@code credentials}, if they may be given to a device now; a 400 otherwise. */
  DeviceCredentials check(DeviceCredentials credentials) {
    try {
      CredentialPolicy.check(credentials, Instant.now());
      return credentials;
    } catch (CredentialPolicy.RefusedException e) {
      refused(e);
      throw e;
    }
  }

  /** {@code token}, if it may be a device's access token; a 400 otherwise. */
  String checkToken(String token) {
    try {
      CredentialPolicy.checkToken(token);
      return token;
    } catch (CredentialPolicy.RefusedException e) {
      refused(e);
      throw e;
    }
  }

  private void refused(CredentialPolicy.RefusedException e) {
    // the EnumMap holds a counter for every refusal, put in the constructor
    Objects.requireNonNull(counters.get(e.refusal())).increment();
  }
}
