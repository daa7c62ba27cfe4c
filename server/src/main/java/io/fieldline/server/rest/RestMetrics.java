package io.fieldline.server.rest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/** The REST API's metric names and meters. Thread-safe (Micrometer meters are). */
final class RestMetrics {

  static final String LOGIN_FAILED = "fieldline.http.login.failed";
  static final String LOGIN_TRACKED = "fieldline.http.login.tracked";

  /** Why a login failed; the {@code reason} tag. */
  enum LoginFailure {
    /** Unknown user name or wrong password. */
    BAD_CREDENTIALS,
    /** Refused with 429 without checking the credentials. */
    THROTTLED
  }

  private final Map<LoginFailure, Counter> loginFailed = new EnumMap<>(LoginFailure.class);

  RestMetrics(MeterRegistry registry, LoginThrottle throttle) {
    for (LoginFailure reason : LoginFailure.values()) {
      loginFailed.put(
          reason,
          Counter.builder(LOGIN_FAILED)
              .description("Failed REST logins")
              .tag("reason", reason.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
    Gauge.builder(LOGIN_TRACKED, throttle, LoginThrottle::tracked)
        .strongReference(true)
        .description("User names plus source addresses with remembered login failures")
        .register(registry);
  }

  void loginFailed(LoginFailure reason) {
    // the EnumMap holds a counter for every constant, put in the constructor
    Objects.requireNonNull(loginFailed.get(reason)).increment();
  }
}
