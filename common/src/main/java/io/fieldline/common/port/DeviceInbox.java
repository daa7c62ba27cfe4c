package io.fieldline.common.port;

import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import java.util.concurrent.CompletionStage;

/**
 * The door from a device session to the device's owner: locally its actor, in a cluster possibly an
 * actor on another node. The transport knows only this port.
 *
 * <p>Implementations must not block the caller and must complete the stage exactly once. A stage
 * completed with {@link Ack.Stored} means every row of the message is stored; any other outcome
 * (including exceptional completion) means the message must not be acknowledged.
 */
public interface DeviceInbox {

  /** Submits a message for storage; the stage completes when the outcome is known. */
  CompletionStage<Ack> submit(DeviceMessage message);
}
