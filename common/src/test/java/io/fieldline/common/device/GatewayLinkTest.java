package io.fieldline.common.device;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GatewayLinkTest {

  private static Device device(String additionalInfoJson) {
    return new Device(DeviceId.random(), "d", "default", "t", 0L, null, additionalInfoJson);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"gateway\":true}| true",
        "{\"gateway\":\"true\",\"x\":1}| true",
        "{\"gateway\":false}| false",
        "{\"gateway\":\"no\"}| false",
        "{}| false",
        "[true]| false",
        "not json| false",
      })
  void should_be_a_gateway_only_when_additional_info_says_gateway_true(
      String info, boolean gateway) {
    assertThat(GatewayLink.isGateway(device(info))).isEqualTo(gateway);
  }

  @Test
  void should_not_be_a_gateway_when_there_is_no_additional_info() {
    assertThat(GatewayLink.isGateway(device(null))).isFalse();
  }

  @Test
  void should_keep_other_keys_and_set_the_gateway_when_a_child_is_linked() {
    DeviceId gateway = DeviceId.random();

    String linked = GatewayLink.linked("{\"description\":\"pump\"}", gateway);

    assertThat(linked)
        .isEqualTo(
            "{\"description\":\"pump\",\"lastConnectedGateway\":\"" + gateway.value() + "\"}");
    assertThat(GatewayLink.gatewayOf(device(linked))).contains(gateway);
  }

  @Test
  void should_start_a_new_object_when_a_child_has_no_additional_info() {
    DeviceId gateway = DeviceId.random();

    assertThat(GatewayLink.gatewayOf(device(GatewayLink.linked(null, gateway)))).contains(gateway);
  }

  @Test
  void should_have_no_gateway_when_the_link_is_absent_or_not_an_id() {
    assertThat(GatewayLink.gatewayOf(device("{}"))).isEmpty();
    assertThat(GatewayLink.gatewayOf(device("{\"lastConnectedGateway\":\"x\"}"))).isEmpty();
    assertThat(GatewayLink.gatewayOf(device(null))).isEmpty();
  }

  @Test
  void should_own_a_device_by_owner_gateway_else_by_its_last_gateway() {
    DeviceId owner = DeviceId.random();
    DeviceId last = DeviceId.random();

    assertThat(
            GatewayLink.ownerOf(
                device(
                    "{\"ownerGateway\":\""
                        + owner.value()
                        + "\",\"lastConnectedGateway\":\""
                        + last.value()
                        + "\"}")))
        .contains(owner);
    assertThat(GatewayLink.ownerOf(device("{\"lastConnectedGateway\":\"" + last.value() + "\"}")))
        .as("a child from before owners were recorded")
        .contains(last);
    assertThat(
            GatewayLink.ownerOf(
                device(
                    "{\"ownerGateway\":\"nope\",\"lastConnectedGateway\":\""
                        + last.value()
                        + "\"}")))
        .as("an owner that is not an id owns nothing, and is not overridden")
        .isEmpty();
    assertThat(GatewayLink.ownerOf(device("{\"description\":\"x\"}"))).isEmpty();
    assertThat(GatewayLink.ownerOf(device(null))).isEmpty();
  }

  @Test
  void should_set_owner_and_last_gateway_and_keep_other_keys_when_a_child_is_owned() {
    DeviceId gateway = DeviceId.random();

    Device owned = device(GatewayLink.owned("{\"note\":\"x\"}", gateway));

    assertThat(GatewayLink.isOwnedBy(owned, gateway)).isTrue();
    assertThat(GatewayLink.isOwnedBy(owned, DeviceId.random())).isFalse();
    assertThat(GatewayLink.gatewayOf(owned)).contains(gateway);
    assertThat(owned.additionalInfoJson()).contains("\"note\":\"x\"");
  }
}
