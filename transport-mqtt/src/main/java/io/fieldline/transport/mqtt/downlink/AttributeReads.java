package io.fieldline.transport.mqtt.downlink;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The attribute reads behind one connection's answers to attribute requests, paced per connection
 * (the publish path's {@code AttributeRequests}: {@code attribute-request-rate} and {@code -burst},
 * a gateway's own pair for a gateway): a device's requests for itself and a gateway's for its
 * children share the one budget. Confined to the channel's event loop.
 */
public interface AttributeReads {

  /**
   * What one request read.
   *
   * @param client the client-side values found (empty when that scope was not asked for)
   * @param shared the shared values found (likewise)
   */
  record Values(List<AttributeKvEntry> client, List<AttributeKvEntry> shared) {
    public Values {
      client = List.copyOf(client);
      shared = List.copyOf(shared);
    }
  }

  /**
   * Counts one request against the connection's pace (reading the socket pauses beyond it) and
   * reads {@code device}'s attributes.
   *
   * @param clientKeys the client-side keys wanted: null for none of that scope, empty for all
   * @param sharedKeys the shared keys wanted, likewise
   * @return the values, completed on the event loop
   */
  CompletionStage<Values> read(
      DeviceId device, @Nullable Set<String> clientKeys, @Nullable Set<String> sharedKeys);
}
