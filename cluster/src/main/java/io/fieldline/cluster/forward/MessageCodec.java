package io.fieldline.cluster.forward;

import io.fieldline.cluster.internal.proto.Attributes;
import io.fieldline.cluster.internal.proto.ForwardReply;
import io.fieldline.cluster.internal.proto.ForwardRequest;
import io.fieldline.cluster.internal.proto.KeyValue;
import io.fieldline.cluster.internal.proto.RejectReason;
import io.fieldline.cluster.internal.proto.Rejected;
import io.fieldline.cluster.internal.proto.Stored;
import io.fieldline.cluster.internal.proto.Telemetry;
import io.fieldline.cluster.internal.proto.TsKeyValue;
import io.fieldline.cluster.internal.proto.Uuid;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Domain records ↔ protobuf messages of {@code fieldline_cluster.proto}. Lossless for every value
 * type ({@link KvEntry} variants map to the {@code KeyValue} oneof). Stateless.
 */
public final class MessageCodec {

  private MessageCodec() {}

  public static Uuid uuid(DeviceId device) {
    return uuid(device.value());
  }

  public static Uuid uuid(UUID value) {
    return Uuid.newBuilder()
        .setMostSignificant(value.getMostSignificantBits())
        .setLeastSignificant(value.getLeastSignificantBits())
        .build();
  }

  public static DeviceId deviceId(Uuid uuid) {
    return new DeviceId(javaUuid(uuid));
  }

  public static UUID javaUuid(Uuid uuid) {
    return new UUID(uuid.getMostSignificant(), uuid.getLeastSignificant());
  }

  static ForwardRequest request(long seq, DeviceMessage message) {
    ForwardRequest.Builder builder =
        ForwardRequest.newBuilder()
            .setSeq(seq)
            .setDeviceId(uuid(message.deviceId()))
            .setReceivedAt(message.receivedAt());
    // Java 17: no pattern switch; DeviceMessage is sealed to these two records.
    if (message instanceof DeviceMessage.PostTelemetry telemetry) {
      Telemetry.Builder body = Telemetry.newBuilder();
      for (TsKvEntry entry : telemetry.entries()) {
        body.addEntries(TsKeyValue.newBuilder().setTs(entry.ts()).setKv(keyValue(entry.kv())));
      }
      builder.setTelemetry(body);
    } else if (message instanceof DeviceMessage.PostAttributes attributes) {
      Attributes.Builder body = Attributes.newBuilder();
      for (KvEntry entry : attributes.entries()) {
        body.addEntries(keyValue(entry));
      }
      builder.setAttributes(body);
    } else {
      throw new IllegalArgumentException("unknown message type " + message.getClass());
    }
    return builder.build();
  }

  /**
   * The device message a request carries.
   *
   * @throws IllegalArgumentException if the request has no body or an empty value
   */
  static DeviceMessage message(ForwardRequest request) {
    DeviceId device = deviceId(request.getDeviceId());
    return switch (request.getBodyCase()) {
      case TELEMETRY -> {
        List<TsKvEntry> entries = new ArrayList<>(request.getTelemetry().getEntriesCount());
        for (TsKeyValue entry : request.getTelemetry().getEntriesList()) {
          entries.add(new TsKvEntry(entry.getTs(), kvEntry(entry.getKv())));
        }
        yield new DeviceMessage.PostTelemetry(device, request.getReceivedAt(), entries);
      }
      case ATTRIBUTES -> {
        List<KvEntry> entries = new ArrayList<>(request.getAttributes().getEntriesCount());
        for (KeyValue entry : request.getAttributes().getEntriesList()) {
          entries.add(kvEntry(entry));
        }
        yield new DeviceMessage.PostAttributes(device, request.getReceivedAt(), entries);
      }
      case BODY_NOT_SET -> throw new IllegalArgumentException("forwarded message without a body");
    };
  }

  /** A typed key/value as its protobuf message. */
  public static KeyValue keyValue(KvEntry entry) {
    KeyValue.Builder kv = KeyValue.newBuilder().setKey(entry.key());
    switch (entry.type()) {
      case BOOLEAN -> kv.setBoolValue(((KvEntry.BooleanKv) entry).bool());
      case LONG -> kv.setLongValue(((KvEntry.LongKv) entry).number());
      case DOUBLE -> kv.setDoubleValue(((KvEntry.DoubleKv) entry).number());
      case STRING -> kv.setStringValue(((KvEntry.StringKv) entry).text());
      case JSON -> kv.setJsonValue(((KvEntry.JsonKv) entry).json());
    }
    return kv.build();
  }

  /**
   * The typed key/value a message carries.
   *
   * @throws IllegalArgumentException if it has no value
   */
  public static KvEntry kvEntry(KeyValue kv) {
    return switch (kv.getValueCase()) {
      case BOOL_VALUE -> KvEntry.of(kv.getKey(), kv.getBoolValue());
      case LONG_VALUE -> KvEntry.of(kv.getKey(), kv.getLongValue());
      case DOUBLE_VALUE -> KvEntry.of(kv.getKey(), kv.getDoubleValue());
      case STRING_VALUE -> KvEntry.of(kv.getKey(), kv.getStringValue());
      case JSON_VALUE -> KvEntry.json(kv.getKey(), kv.getJsonValue());
      case VALUE_NOT_SET ->
          throw new IllegalArgumentException("key '" + kv.getKey() + "' has no value");
    };
  }

  static ForwardReply reply(long seq, Ack ack) {
    ForwardReply.Builder reply = ForwardReply.newBuilder().setSeq(seq);
    if (ack instanceof Ack.Rejected rejected) {
      reply.setRejected(
          Rejected.newBuilder().setReason(reason(rejected.reason())).setDetail(rejected.detail()));
    } else {
      reply.setStored(Stored.getDefaultInstance());
    }
    return reply.build();
  }

  static Ack ack(ForwardReply reply) {
    return switch (reply.getOutcomeCase()) {
      case STORED -> Ack.stored();
      case REJECTED ->
          Ack.rejected(reason(reply.getRejected().getReason()), reply.getRejected().getDetail());
      case OUTCOME_NOT_SET -> Ack.rejected(Ack.Reason.WRITE_FAILED, "owner sent no outcome");
    };
  }

  private static RejectReason reason(Ack.Reason reason) {
    return switch (reason) {
      case WRITE_FAILED -> RejectReason.WRITE_FAILED;
      case OVERLOADED -> RejectReason.OVERLOADED;
      case UNKNOWN_DEVICE -> RejectReason.UNKNOWN_DEVICE;
      case UNAVAILABLE -> RejectReason.UNAVAILABLE;
    };
  }

  private static Ack.Reason reason(RejectReason reason) {
    return switch (reason) {
      case WRITE_FAILED -> Ack.Reason.WRITE_FAILED;
      case OVERLOADED -> Ack.Reason.OVERLOADED;
      case UNKNOWN_DEVICE -> Ack.Reason.UNKNOWN_DEVICE;
      case UNAVAILABLE -> Ack.Reason.UNAVAILABLE;
      // A newer owner's reason this node does not know: not stored, whatever it was.
      case REJECT_REASON_UNSPECIFIED, UNRECOGNIZED -> Ack.Reason.WRITE_FAILED;
    };
  }
}
