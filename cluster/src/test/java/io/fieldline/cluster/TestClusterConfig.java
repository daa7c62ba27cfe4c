package io.fieldline.cluster;

import com.typesafe.config.ConfigFactory;

/** The settings of a node in an IT: on 127.0.0.1, a free gRPC port, short timeouts. */
public final class TestClusterConfig {

  private TestClusterConfig() {}

  /**
   * @param settings more {@code fieldline.cluster} lines ({@code key = value}), applied last
   */
  public static ClusterConfig of(String zookeeper, String nodeId, String... settings) {
    StringBuilder text =
        new StringBuilder()
            .append("fieldline.cluster {\n")
            .append("zookeeper = \"")
            .append(zookeeper)
            .append("\"\nnode-id = ")
            .append(nodeId)
            .append("\ngrpc-host = 127.0.0.1\ngrpc-port = 0\nrebalance-delay = 0 s\n");
    for (String setting : settings) {
      text.append(setting).append('\n');
    }
    text.append("}\n");
    return ClusterConfig.from(
        ConfigFactory.parseString(text.toString())
            .withFallback(ConfigFactory.defaultReference())
            .resolve());
  }
}
