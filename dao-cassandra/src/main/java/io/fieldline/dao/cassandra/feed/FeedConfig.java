package io.fieldline.dao.cassandra.feed;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * The change feed's settings, the {@code fieldline.feed} block (documented in this module's {@code
 * reference.conf}).
 *
 * @param enabled whether stored messages are written to the feed (export needs it)
 * @param retention how long feed rows are kept (their TTL)
 * @param memoryEntries how many of the newest entries of this process's log are also held in memory
 *     (and the most writes of the feed that may be in flight at once)
 * @param node the node id written with this process's log ({@code <hostname>-<pid>} when empty)
 */
public record FeedConfig(boolean enabled, Duration retention, int memoryEntries, String node) {

  /** The configuration path of this block. */
  public static final String PATH = "fieldline.feed";

  /** Reads and validates {@code fieldline.feed}. */
  public static FeedConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, PATH);
    boolean enabled = r.bool("enabled");
    Duration retention = r.duration("retention");
    r.check(
        retention.compareTo(Duration.ofHours(1)) >= 0
            && retention.compareTo(Duration.ofDays(365)) <= 0,
        "retention",
        "must be between 1 hour and 365 days");
    int memoryEntries = r.integer("memory-entries", 1024, 1 << 22);
    String node = r.string("node");
    return r.validated(
        new FeedConfig(enabled, retention, memoryEntries, node.isBlank() ? defaultNode() : node));
  }

  /** Feed rows' TTL in seconds. */
  public int retentionSeconds() {
    return (int) retention.toSeconds();
  }

  private static String defaultNode() {
    String host = System.getenv().getOrDefault("HOSTNAME", "node");
    return host + "-" + ProcessHandle.current().pid();
  }
}
