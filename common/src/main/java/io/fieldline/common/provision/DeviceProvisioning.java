package io.fieldline.common.provision;

import java.net.InetAddress;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Answers provisioning requests, whichever transport they came by. The request is the payload a
 * ThingsBoard device sends (JSON, {@link ProvisionRequest}); the answer is the one it expects
 * ({@link ProvisionResponse#toJson}). Every refusal is an answer, never a failed stage: a request
 * that is not JSON, too large, over the rate limits, or that meets a storage failure is answered
 * {@link ProvisionStatus#FAILURE}. Asynchronous, never blocks the caller; thread-safe.
 */
public interface DeviceProvisioning {

  /**
   * Answers one request.
   *
   * @param payload the request's bytes
   * @param source the address it came from (the per-source rate limits), null when unknown
   */
  CompletionStage<ProvisionResponse> provision(byte[] payload, @Nullable InetAddress source);
}
