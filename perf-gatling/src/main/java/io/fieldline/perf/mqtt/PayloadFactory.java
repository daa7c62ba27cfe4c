package io.fieldline.perf.mqtt;

/**
 * Builds the payload of one PUBLISH. Called on the user's event loop for every message, so it must
 * be cheap and must not block.
 */
@FunctionalInterface
public interface PayloadFactory {

  byte[] payload(MessageContext message);
}
