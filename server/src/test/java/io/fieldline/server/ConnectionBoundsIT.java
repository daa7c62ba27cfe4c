package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;
import io.fieldline.common.device.Device;
import io.fieldline.server.RawMqtt.Packet;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The per-connection bounds (issue 11, items 1, 6, 7 and the client-side RPC rate) against a live
 * server, with raw sockets where a client library would be too polite: a client that never reads
 * its answers stops being read and is closed, with the server's heap after GC bounded meanwhile; a
 * read of 3,000 PUBLISHes meets the in-flight window packet by packet; QoS 2 ids awaiting PUBREL
 * are capped without refusing the client; client-side RPC is paced, every request answered. A
 * bystander device publishes QoS 1 through every test and each acknowledged message is stored.
 */
class ConnectionBoundsIT extends BadClientTestBase {

  private static final String TELEMETRY = "v1/devices/me/telemetry";
  private static final int AWAITING_RELEASE_CAP = 10;
  private static final Duration STALL_TIMEOUT = Duration.ofSeconds(6);
  // What the server may keep for one connection that does not read: its outbound water mark, one
  // read of held packets, and the noise of a live server and Cassandra driver around it. The
  // unbounded server of the issue grew by hundreds of megabytes within seconds.
  private static final long HEAP_GROWTH_BOUND = 64L << 20;

  private final ExecutorService writer = Executors.newSingleThreadExecutor();

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.mqtt.outbound-stall-timeout",
        STALL_TIMEOUT.toSeconds() + " s",
        "fieldline.mqtt.max-awaiting-release",
        AWAITING_RELEASE_CAP,
        "fieldline.mqtt.client-rpc-rate",
        5,
        "fieldline.mqtt.client-rpc-burst",
        5,
        // Room for the in-flight window (100) and little more: a window applied per read, not
        // per packet, overflows it with the first large read.
        "fieldline.actors.max-inflight-writes",
        16,
        "fieldline.actors.stash-capacity",
        200);
  }

  @AfterAll
  void stopWriter() {
    writer.shutdownNow();
  }

  /**
   * Item 1. The client floods PUBLISHes whose answers it never reads: QoS 1 on the RPC response
   * topic (a PUBACK each) or client-side RPC requests (a response each, paced, so reading pauses
   * for the rate before the outbound bound is reached).
   */
  @ParameterizedTest
  @ValueSource(strings = {"puback", "rpc"})
  void should_stop_reading_a_client_that_never_reads_and_keep_the_heap_bounded(String variant)
      throws Exception {
    long heapBefore = heapAfterGc();
    double slowReadersBefore = metric("fieldline_mqtt_rejected_total{reason=\"slow_reader\"");
    String pauseCause = variant.equals("puback") ? "outbound" : "rpc_rate";
    double pausesBefore = pausesOf(pauseCause);
    Device device = createDevice("never-reads-" + variant, "never-reads-" + variant + "-token");
    Socket socket = socket(4096);
    OutputStream out = socket.getOutputStream();
    out.write(RawMqtt.connect(device.name(), device.accessToken(), true));
    out.flush();
    assertThat(RawMqtt.read(socket.getInputStream()).type()).isEqualTo(RawMqtt.CONNACK);

    byte[] burst = flood(variant);
    AtomicBoolean stop = new AtomicBoolean();
    Future<?> flooding =
        writer.submit(
            () -> {
              try {
                while (!stop.get()) {
                  out.write(burst);
                }
              } catch (IOException closedByServer) {
                // the server closed the connection, or the test did
              }
              return null;
            });

    // The outbound pause comes once the kernel's send buffer (up to tcp_wmem's maximum) is full.
    await().atMost(Duration.ofSeconds(60)).until(() -> pausesOf(pauseCause) > pausesBefore);
    // The server no longer reads this socket: what it holds for it is bounded.
    assertThat(heapAfterGc() - heapBefore).isLessThan(HEAP_GROWTH_BOUND);
    bystander.publishesAndAllStored();
    if (variant.equals("puback")) {
      await()
          .atMost(STALL_TIMEOUT.plusSeconds(20))
          .until(
              () ->
                  metric("fieldline_mqtt_rejected_total{reason=\"slow_reader\"")
                      > slowReadersBefore);
      flooding.get(20, TimeUnit.SECONDS); // the writer saw the close
    } else {
      // Paced, not refused: the connection stays open.
      assertThat(flooding.isDone()).isFalse();
      stop.set(true);
      socket.close();
      flooding.get(20, TimeUnit.SECONDS);
    }
  }

  /**
   * Item 7: the in-flight window applies per packet, however many arrive in one read. The packets
   * are small (a key each, no timestamp): one read holds far more of them than the device's stash
   * of this class.
   */
  @Test
  void should_acknowledge_in_order_every_publish_of_one_write_of_3000() throws Exception {
    Device device = createDevice("one-write", "one-write-token");
    double windowPausesBefore = pausesOf("window");
    Socket socket = socket();
    OutputStream out = socket.getOutputStream();
    out.write(RawMqtt.connect("one-write", "one-write-token", true));
    out.flush();
    assertThat(RawMqtt.read(socket.getInputStream()).type()).isEqualTo(RawMqtt.CONNACK);
    ByteArrayOutputStream oneWrite = new ByteArrayOutputStream();
    for (int id = 1; id <= 3000; id++) {
      oneWrite.writeBytes(RawMqtt.publish(TELEMETRY, 1, id, "{\"k" + id + "\":1}"));
    }
    out.write(oneWrite.toByteArray());
    out.flush();

    InputStream in = socket.getInputStream();
    for (int id = 1; id <= 3000; id++) {
      Packet ack = RawMqtt.read(in);
      assertThat(ack.type()).isEqualTo(RawMqtt.PUBACK);
      assertThat(ack.packetId()).isEqualTo(id);
    }
    out.write(RawMqtt.pingreq());
    out.flush();
    assertThat(RawMqtt.read(in).type()).as("still connected").isEqualTo(RawMqtt.PINGRESP);
    assertThat(rows(device)).isEqualTo(3000);
    assertThat(pausesOf("window")).isGreaterThan(windowPausesBefore);
  }

  /**
   * Item 6: the QoS 2 ids a session keeps between PUBREC and PUBREL are capped. A client that never
   * releases them is still served: every message is stored and acknowledged, the oldest ids are
   * forgotten (counted), and a late PUBREL of a forgotten id is still completed.
   */
  @Test
  void should_keep_at_most_the_cap_of_qos2_ids_and_keep_serving_the_client() throws Exception {
    Device device = createDevice("qos2-holder", "qos2-holder-token");
    double forgottenBefore = metric("fieldline_mqtt_qos2_forgotten_total");
    Socket socket = socket();
    OutputStream out = socket.getOutputStream();
    InputStream in = socket.getInputStream();
    out.write(RawMqtt.connect("qos2-holder", "qos2-holder-token", false));
    out.flush();
    assertThat(RawMqtt.read(in).type()).isEqualTo(RawMqtt.CONNACK);
    int messages = 3 * AWAITING_RELEASE_CAP;
    for (int id = 1; id <= messages; id++) {
      out.write(RawMqtt.publish(TELEMETRY, 2, id, qos2Payload(id)));
    }
    out.flush();
    for (int id = 1; id <= messages; id++) {
      Packet pubrec = RawMqtt.read(in);
      assertThat(pubrec.type()).isEqualTo(RawMqtt.PUBREC);
      assertThat(pubrec.packetId()).isEqualTo(id);
    }
    assertThat(metric("fieldline_mqtt_qos2_forgotten_total") - forgottenBefore)
        .isEqualTo(messages - AWAITING_RELEASE_CAP);

    // A redelivery of a held id is recognised (not stored twice); the forgotten id 1 completes.
    out.write(RawMqtt.publish(TELEMETRY, 2, messages, qos2Payload(messages)));
    out.write(RawMqtt.pubrel(1));
    out.flush();
    assertThat(RawMqtt.read(in).type()).isEqualTo(RawMqtt.PUBREC);
    assertThat(RawMqtt.read(in).type()).isEqualTo(RawMqtt.PUBCOMP);
    assertThat(rows(device)).isEqualTo(messages);
  }

  /** Client-side RPC beyond its rate: every request answered, through a real client. */
  @Test
  void should_answer_every_client_rpc_when_requests_exceed_the_rate() throws Exception {
    Device device = createDevice("rpc-caller", "rpc-caller-token");
    double pausesBefore = pausesOf("rpc_rate");
    Mqtt3BlockingClient caller = client("rpc-caller");
    caller.connectWith().simpleAuth().username(device.accessToken()).applySimpleAuth().send();
    int requests = 15;
    try (Mqtt3BlockingClient.Mqtt3Publishes answers =
        caller.publishes(MqttGlobalPublishFilter.ALL)) {
      caller.subscribeWith().topicFilter("v1/devices/me/rpc/response/+").send();
      for (int i = 0; i < requests; i++) {
        caller
            .publishWith()
            .topic("v1/devices/me/rpc/request/" + i)
            .qos(MqttQos.AT_LEAST_ONCE)
            .payload(
                "{\"method\":\"getCurrentTime\",\"params\":{}}".getBytes(StandardCharsets.UTF_8))
            .send();
      }
      List<String> answered = new ArrayList<>();
      for (int i = 0; i < requests; i++) {
        Mqtt3Publish answer = answers.receive(20, TimeUnit.SECONDS).orElseThrow();
        assertThat(new String(answer.getPayloadAsBytes(), StandardCharsets.UTF_8))
            .startsWith("{\"currentTime\":");
        answered.add(answer.getTopic().toString());
      }
      assertThat(answered).hasSize(requests).doesNotHaveDuplicates();
    } finally {
      caller.disconnect();
    }
    assertThat(pausesOf("rpc_rate")).isGreaterThan(pausesBefore);
  }

  private double pausesOf(String cause) {
    return metric("fieldline_mqtt_backpressure_pauses_total{cause=\"" + cause + "\"");
  }

  private static String qos2Payload(int id) {
    return "{\"ts\":" + (1_700_000_000_000L + id) + ",\"values\":{\"q\":2}}";
  }

  /** Thousands of packets in one write: QoS 1 on the RPC response topic, or RPC requests. */
  private static byte[] flood(String variant) {
    ByteArrayOutputStream packets = new ByteArrayOutputStream();
    for (int i = 1; i <= 2000; i++) {
      packets.writeBytes(
          variant.equals("puback")
              ? RawMqtt.publish("v1/devices/me/rpc/response/1", 1, i, "{}")
              : RawMqtt.publish(
                  "v1/devices/me/rpc/request/" + i, 0, 0, "{\"method\":\"getCurrentTime\"}"));
    }
    return packets.toByteArray();
  }

  /** Heap in use after a full collection (the server runs in this JVM). */
  private static long heapAfterGc() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    memory.gc();
    return memory.getHeapMemoryUsage().getUsed();
  }
}
