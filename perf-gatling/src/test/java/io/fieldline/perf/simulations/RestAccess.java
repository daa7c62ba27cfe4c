package io.fieldline.perf.simulations;

import io.fieldline.perf.provision.DeviceProvisioner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;

/**
 * Where a simulation's REST or WebSocket client goes and whom it logs in as, from the system
 * properties {@code httpUrl} (e.g. {@code http://127.0.0.1:8080}), {@code restUser} and {@code
 * restPassword}, all required.
 */
record RestAccess(URI httpUrl, String user, String password) {

  /** Reads the three properties; problems go to {@code errors}. */
  static RestAccess fromSystemProperties(List<String> errors) {
    URI url = URI.create("http://127.0.0.1:8080");
    String urlValue = System.getProperty("httpUrl", "").strip();
    if (urlValue.isEmpty()) {
      errors.add("httpUrl: required (the REST base URL, e.g. http://127.0.0.1:8080)");
    } else {
      try {
        url = new URI(urlValue);
        if (!"http".equals(url.getScheme()) || url.getHost() == null) {
          errors.add("httpUrl: an http://host:port URL, not " + urlValue);
        }
      } catch (URISyntaxException e) {
        errors.add("httpUrl: not a URL: " + urlValue);
      }
    }
    String user = System.getProperty("restUser", "").strip();
    String password = System.getProperty("restPassword", "");
    if (user.isEmpty() || password.isEmpty()) {
      errors.add("restUser and restPassword: required (the REST login)");
    }
    return new RestAccess(url, user, password);
  }

  /** Logs in ({@code POST /api/auth/login}) and returns the access token (a JWT). */
  String login() {
    try {
      return new DeviceProvisioner(httpUrl).login(user, password);
    } catch (IOException e) {
      throw new UncheckedIOException("REST login at " + httpUrl + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while logging in", e);
    }
  }

  /** The WebSocket base URL of the same server: {@code ws://host:port}. */
  String wsUrl() {
    return "ws://" + httpUrl.getHost() + ":" + httpUrl.getPort();
  }

  @Override
  public String toString() {
    return "RestAccess[" + httpUrl + ", " + user + "]"; // never the password
  }
}
