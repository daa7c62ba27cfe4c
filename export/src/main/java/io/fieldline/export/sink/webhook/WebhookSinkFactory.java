package io.fieldline.export.sink.webhook;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.export.sink.InvalidSinkException;
import io.fieldline.export.sink.Sink;
import io.fieldline.export.sink.SinkFactory;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The {@code WEBHOOK} sink type. Its configuration (a JSON object; unknown fields are refused):
 *
 * <ul>
 *   <li>{@code url} (required): absolute {@code http://} or {@code https://} URL with a host and no
 *       user info, at most 2,048 characters;
 *   <li>{@code secret} (required, write-only): 16 to 1,024 characters, the HMAC-SHA256 key of the
 *       {@code X-Fieldline-Signature} header; left out of {@link #redacted}; an update without it
 *       (or with {@code null}) keeps the stored one;
 *   <li>{@code headers} (default <code>{}</code>): up to 32 extra string headers sent with every
 *       POST, each value at most 4,096 characters; {@code Content-Type}, {@code Content-Length},
 *       {@code Host}, {@code Connection}, {@code Expect}, {@code Upgrade}, the hop-by-hop headers
 *       ({@code Transfer-Encoding}, {@code TE}, {@code Trailer}, {@code Keep-Alive}, {@code
 *       Proxy-Connection}) and {@code X-Fieldline-*} are refused (names compared ignoring case);
 *   <li>{@code batchSize} (default 500, 1..10,000): most records per POST;
 *   <li>{@code maxBatchBytes} (default 1,048,576, 1 KiB..16 MiB): most bytes of record JSON per
 *       POST (a larger record goes alone);
 *   <li>{@code lingerMs} (default 100, 0..10,000): how long a batch that is not full waits;
 *   <li>{@code timeoutMs} (default 10,000, 100..120,000): how long one POST may take before it is
 *       retried.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class WebhookSinkFactory implements SinkFactory {

  /** The type name sinks of this kind are stored with. */
  public static final String TYPE = "WEBHOOK";

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public ObjectNode validate(ObjectNode configuration, @Nullable ObjectNode previous)
      throws InvalidSinkException {
    return WebhookConfig.validate(configuration, previous);
  }

  @Override
  public ObjectNode redacted(ObjectNode stored) {
    ObjectNode shown = stored.deepCopy();
    shown.remove(WebhookConfig.SECRET);
    return shown;
  }

  @Override
  public Set<String> secretFields() {
    return Set.of(WebhookConfig.SECRET);
  }

  @Override
  public Sink create(UUID sinkId, String sinkName, ObjectNode stored) {
    return new WebhookSink(sinkName, WebhookConfig.from(stored));
  }
}
