package io.fieldline.perf.verify;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.perf.provision.ProvisionedDevice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GatewayRowsCheckTest {

  private final LedgerEntry gatewayA = LedgerEntry.parse("tok-a,1000,10,0-9");
  private final LedgerEntry gatewayB = LedgerEntry.parse("tok-b,2000,5,0-2|4-4");

  @Test
  void should_give_each_child_its_gateways_ledger_under_its_own_name() {
    GatewayRowsCheck.Children children =
        GatewayRowsCheck.expand(
            Map.of("tok-a", "gw-a", "tok-b", "gw-b"),
            List.of(gatewayA, gatewayB),
            2,
            Map.of(
                "gw-a-child-0",
                "id-a0",
                "gw-a-child-1",
                "id-a1",
                "gw-b-child-0",
                "id-b0",
                "gw-b-child-1",
                "id-b1"));

    assertThat(children.feeder())
        .containsExactly(
            new ProvisionedDevice("gw-a-child-0", "id-a0", "gw-a-child-0"),
            new ProvisionedDevice("gw-a-child-1", "id-a1", "gw-a-child-1"),
            new ProvisionedDevice("gw-b-child-0", "id-b0", "gw-b-child-0"),
            new ProvisionedDevice("gw-b-child-1", "id-b1", "gw-b-child-1"));
    LedgerEntry childB1 = children.ledger().get(3);
    assertThat(childB1.username()).isEqualTo("gw-b-child-1");
    assertThat(childB1.baseTs()).isEqualTo(2000);
    assertThat(childB1.sent()).isEqualTo(5);
    assertThat(childB1.acked()).isEqualTo(gatewayB.acked());
    assertThat(children.expected()).isEqualTo(4);
    assertThat(children.ackedOfMissingChildren()).isZero();
  }

  @Test
  void should_count_the_acknowledged_points_of_a_child_never_created_as_missing() {
    GatewayRowsCheck.Children children =
        GatewayRowsCheck.expand(
            Map.of("tok-a", "gw-a"), List.of(gatewayA), 3, Map.of("gw-a-child-0", "id-a0"));
    StorageCheck found = new StorageCheck(1, 10, 10, 10, 0, 0, 0, 40, 4, 0);

    Map<String, Object> result = GatewayRowsCheck.result(found, children, 1, 10);

    assertThat(children.feeder()).hasSize(1);
    assertThat(children.expected()).isEqualTo(3);
    assertThat(result)
        .containsEntry("unit", "points")
        .containsEntry("acked", 30L)
        .containsEntry("storedAcked", 10L)
        .containsEntry("missing", 20L)
        .containsEntry("childrenFound", 1L)
        .containsEntry("childrenExpected", 3L)
        .containsEntry("messagesAcked", 10L);
  }
}
