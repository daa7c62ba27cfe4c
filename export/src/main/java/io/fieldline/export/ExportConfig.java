package io.fieldline.export;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * The exporter's settings, the {@code fieldline.export} block (documented in this module's {@code
 * reference.conf}).
 *
 * @param lease how long a hold on a feed log lasts without renewal
 * @param refreshInterval how often definitions, logs and leases are looked at
 * @param cursorInterval how often cursors are saved and other nodes' progress read
 * @param readBatch entries read from the feed at once
 * @param retryMin first backoff after a failed delivery
 * @param retryMax longest backoff
 * @param maxSinks most sinks
 * @param moveWindow how long after a device moved between nodes its records are kept behind its
 *     former owner's
 */
public record ExportConfig(
    Duration lease,
    Duration refreshInterval,
    Duration cursorInterval,
    int readBatch,
    Duration retryMin,
    Duration retryMax,
    int maxSinks,
    Duration moveWindow) {

  /** The configuration path of this block. */
  public static final String PATH = "fieldline.export";

  /** Reads and validates {@code fieldline.export}. */
  public static ExportConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, PATH);
    Duration lease = r.duration("lease");
    Duration refresh = r.duration("refresh-interval");
    Duration cursor = r.duration("cursor-interval");
    int readBatch = r.integer("read-batch", 10, 100_000);
    Duration retryMin = r.duration("retry-min");
    Duration retryMax = r.duration("retry-max");
    int maxSinks = r.integer("max-sinks", 1, 1000);
    Duration moveWindow = r.duration("move-window");
    r.check(
        lease.compareTo(refresh.multipliedBy(3)) >= 0,
        "lease",
        "must be at least three refresh intervals");
    r.check(!cursor.isZero() && !cursor.isNegative(), "cursor-interval", "must be positive");
    r.check(
        !retryMin.isZero() && retryMin.compareTo(retryMax) <= 0,
        "retry-min",
        "must be positive and at most retry-max");
    return r.validated(
        new ExportConfig(
            lease, refresh, cursor, readBatch, retryMin, retryMax, maxSinks, moveWindow));
  }
}
