package io.fieldline.fleet.provision;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * Provisioning settings ({@code fieldline.provision}, documented in this module's reference.conf).
 *
 * @param maxRequestBytes largest request payload; a larger one is answered FAILURE unread
 * @param perAddressRate requests per second one source address may send (a token bucket)
 * @param perAddressBurst requests one source address may send at once
 * @param totalRate requests per second this node answers, all sources together
 * @param totalBurst requests this node answers at once, all sources together
 * @param maxFailuresPerAddress requests answered NOT_FOUND (unknown key, wrong secret) from one
 *     address within {@code failureWindow}, after which that address is refused until the window
 *     ends
 * @param failureWindow the window of {@code maxFailuresPerAddress}, starting at the first failure
 * @param maxTrackedAddresses source addresses remembered (least recently seen forgotten first)
 */
public record ProvisionConfig(
    int maxRequestBytes,
    double perAddressRate,
    int perAddressBurst,
    double totalRate,
    int totalBurst,
    int maxFailuresPerAddress,
    Duration failureWindow,
    int maxTrackedAddresses) {

  /** Reads {@code fieldline.provision}. */
  public static ProvisionConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, "fieldline.provision");
    ProvisionConfig config =
        new ProvisionConfig(
            (int) r.bytes("max-request-size", 256, 1024 * 1024),
            rate(r, "per-address-rate"),
            r.integer("per-address-burst", 1),
            rate(r, "total-rate"),
            r.integer("total-burst", 1),
            r.integer("max-failures-per-address", 1),
            r.positiveDuration("failure-window"),
            r.integer("max-tracked-addresses", 1, 10_000_000));
    return r.validated(config);
  }

  private static double rate(ConfigReader r, String key) {
    double rate = r.parsed(key, 1.0, Double::parseDouble);
    r.check(rate > 0 && rate <= 1_000_000, key, "must be a number in (0, 1000000]");
    return rate;
  }
}
