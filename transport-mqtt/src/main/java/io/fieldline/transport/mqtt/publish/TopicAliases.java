package io.fieldline.transport.mqtt.publish;

import io.netty.handler.codec.mqtt.MqttProperties;
import org.jspecify.annotations.Nullable;

/**
 * The inbound topic aliases of one MQTT 5 connection (MQTT 5 §3.3.2.3.4): a PUBLISH with a topic
 * name and a Topic Alias defines the alias; one with an empty topic name and an alias uses it.
 * Aliases last as long as the connection, at most {@code topic-alias-maximum} of them (announced in
 * CONNACK), so the table is bounded by configuration, not by the client.
 *
 * <p>Confined to the channel's event loop.
 */
final class TopicAliases {

  private final int maximum;
  private @Nullable String @Nullable [] topics;

  /**
   * @param maximum the Topic Alias Maximum granted to the connection; 0 = aliases not allowed
   */
  TopicAliases(int maximum) {
    this.maximum = maximum;
  }

  /**
   * The topic a PUBLISH is for.
   *
   * @return the topic name, or null if the PUBLISH breaks the alias rules (a Protocol Error or
   *     Topic Alias invalid: alias 0 or above the maximum, an alias never defined, or an empty
   *     topic name without an alias)
   */
  @Nullable String resolve(String topicName, MqttProperties properties) {
    MqttProperties.MqttProperty<?> property = properties.getProperty(MqttProperties.TOPIC_ALIAS);
    if (property == null) {
      return topicName.isEmpty() ? null : topicName;
    }
    if (!(property.value() instanceof Integer alias) || alias < 1 || alias > maximum) {
      return null;
    }
    if (topicName.isEmpty()) {
      return topics == null ? null : topics[alias - 1];
    }
    if (topics == null) {
      topics = new String[maximum];
    }
    topics[alias - 1] = topicName;
    return topicName;
  }
}
