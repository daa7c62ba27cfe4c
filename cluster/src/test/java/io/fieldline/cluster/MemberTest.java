package io.fieldline.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MemberTest {

  @Test
  void should_read_back_the_same_member_when_written_as_json() {
    Member member = new Member("n1", "10.0.0.5:1883", "10.0.0.5:8080", "10.0.0.5:9090");
    assertThat(Member.fromJson(member.toJson())).isEqualTo(member);
    assertThat(new String(member.toJson(), StandardCharsets.UTF_8))
        .isEqualTo(
            "{\"nodeId\":\"n1\",\"mqtt\":\"10.0.0.5:1883\",\"http\":\"10.0.0.5:8080\",\"grpc\":\"10.0.0.5:9090\"}");
    assertThat(member.grpcHost()).isEqualTo("10.0.0.5");
    assertThat(member.grpcPort()).isEqualTo(9090);
  }

  @Test
  void should_reject_the_payload_when_a_field_or_the_grpc_port_is_missing() {
    assertThatThrownBy(
            () -> Member.fromJson("{\"nodeId\":\"n1\"}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mqtt");
    assertThatThrownBy(
            () ->
                Member.fromJson(
                    "{\"nodeId\":\"n1\",\"mqtt\":\"h:1\",\"http\":\"h:2\",\"grpc\":\"h\"}"
                        .getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("gRPC port");
    assertThatThrownBy(() -> Member.fromJson("not json".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
