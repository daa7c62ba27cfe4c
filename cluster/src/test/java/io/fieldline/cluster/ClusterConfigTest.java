package io.fieldline.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ClusterConfigTest {

  private static Config config(String hocon) {
    return ConfigFactory.parseString(hocon)
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  @Test
  void should_run_single_node_with_documented_defaults_when_nothing_is_set() {
    ClusterConfig config = ClusterConfig.from(config(""));
    assertThat(config.enabled()).isFalse();
    assertThat(config.root()).isEqualTo("/fieldline/nodes");
    assertThat(config.grpcPort()).isEqualTo(9090);
    assertThat(config.advertisedHost()).isEqualTo("127.0.0.1");
    assertThat(config.virtualNodes()).isEqualTo(64);
    assertThat(config.rebalanceDelay()).isEqualTo(Duration.ofSeconds(2));
    assertThat(config.forwardTimeout()).isEqualTo(Duration.ofSeconds(20));
    assertThat(config.maxInflightPerPeer()).isEqualTo(1024);
    assertThat(config.eventTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(config.maxInflightEventsPerPeer()).isEqualTo(1024);
    assertThat(config.maxPendingRpcCalls()).isEqualTo(10_000);
    assertThat(config.nodeId()).as("hostname-pid").endsWith("-" + ProcessHandle.current().pid());
  }

  @Test
  void should_join_a_cluster_when_a_connect_string_is_set() {
    ClusterConfig config =
        ClusterConfig.from(
            config(
                "fieldline.cluster { zookeeper = \"127.0.0.1:2181\", node-id = n1, grpc-port = 0"
                    + " }"));
    assertThat(config.enabled()).isTrue();
    assertThat(config.nodeId()).isEqualTo("n1");
    assertThat(config.grpcPort()).isZero();
  }

  @Test
  void should_list_every_invalid_key_when_several_are_wrong() {
    assertThatThrownBy(
            () ->
                ClusterConfig.from(
                    config(
                        String.join(
                            "\n",
                            "fieldline.cluster.root = \"fieldline/\"",
                            "fieldline.cluster.node-id = \"a b\"",
                            "fieldline.cluster.grpc-port = 70000",
                            "fieldline.cluster.virtual-nodes = 0",
                            "fieldline.cluster.forward-timeout = 0s",
                            "fieldline.cluster.max-inflight-per-peer = 1",
                            "fieldline.cluster.event-timeout = -1s",
                            "fieldline.cluster.max-inflight-events-per-peer = 0",
                            "fieldline.cluster.max-pending-rpc-calls = 0",
                            "fieldline.cluster.rebalance-delay = oops"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fieldline.cluster.root: must be")
        .hasMessageContaining("fieldline.cluster.node-id: must be")
        .hasMessageContaining("fieldline.cluster.grpc-port: must be")
        .hasMessageContaining("fieldline.cluster.virtual-nodes: must be")
        .hasMessageContaining("fieldline.cluster.forward-timeout: must be a positive duration")
        .hasMessageContaining("fieldline.cluster.max-inflight-per-peer: must be")
        .hasMessageContaining("fieldline.cluster.event-timeout: must be a positive duration")
        .hasMessageContaining("fieldline.cluster.max-inflight-events-per-peer: must be")
        .hasMessageContaining("fieldline.cluster.max-pending-rpc-calls: must be")
        .hasMessageContaining("fieldline.cluster.rebalance-delay: ");
  }
}
