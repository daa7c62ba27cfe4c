package io.fieldline.transport.mqtt.publish;

import io.fieldline.transport.mqtt.session.CloseReason;
import io.netty.handler.codec.mqtt.MqttProperties;
import org.jspecify.annotations.Nullable;

/**
 * The inbound topic aliases of one MQTT 5 connection (MQTT 5 §3.3.2.3.4): a PUBLISH with a topic
 * name and a Topic Alias defines the alias; one with an empty topic name and an alias uses it.
 * Aliases last as long as the connection, at most {@code topic-alias-maximum} of them (announced in
 * CONNACK), each for a topic of at most {@link #MAX_TOPIC_LENGTH} characters, so what a connection
 * keeps here is bounded by configuration, not by the client.
 *
 * <p>Confined to the channel's event loop.
 */
final class TopicAliases {

  /**
   * The longest topic an alias may stand for. Every topic of the device API is far shorter; without
   * a bound, 16 aliases of 64 KiB topics would let each connection pin a megabyte.
   */
  static final int MAX_TOPIC_LENGTH = 1024;

  private final int maximum;
  private @Nullable String @Nullable [] topics;
  private @Nullable CloseReason violation;

  /**
   * @param maximum the Topic Alias Maximum granted to the connection; 0 = aliases not allowed
   */
  TopicAliases(int maximum) {
    this.maximum = maximum;
  }

  /**
   * The topic a PUBLISH is for.
   *
   * @return the topic name, or null if the PUBLISH breaks the alias rules; {@link #violation()}
   *     then says how
   */
  @Nullable String resolve(String topicName, MqttProperties properties) {
    MqttProperties.MqttProperty<?> property = properties.getProperty(MqttProperties.TOPIC_ALIAS);
    if (property == null) {
      // §3.3.2.1: an empty topic name without a Topic Alias is a Protocol Error.
      return topicName.isEmpty() ? fail(CloseReason.PROTOCOL) : topicName;
    }
    if (!(property.value() instanceof Integer alias) || alias < 1 || alias > maximum) {
      return fail(CloseReason.TOPIC_ALIAS); // §3.3.2.3.4: 0x94
    }
    if (topicName.isEmpty()) {
      String topic = topics == null ? null : topics[alias - 1];
      // Using an alias that was never defined: a Protocol Error, as other brokers answer it.
      return topic != null ? topic : fail(CloseReason.PROTOCOL);
    }
    if (topicName.length() > MAX_TOPIC_LENGTH) {
      return fail(CloseReason.TOPIC_ALIAS);
    }
    if (topics == null) {
      topics = new String[maximum];
    }
    topics[alias - 1] = topicName;
    return topicName;
  }

  /** Why the last {@link #resolve} returned null. */
  CloseReason violation() {
    return violation == null ? CloseReason.PROTOCOL : violation;
  }

  private @Nullable String fail(CloseReason reason) {
    violation = reason;
    return null;
  }
}
