package io.fieldline.transport.mqtt.pipeline;

/** Names of the MQTT pipeline's stages, in pipeline order. */
public final class PipelineNames {

  /** TLS listener only: first of all, so that every other stage sees plain MQTT. */
  public static final String TLS = "tls";

  /** TLS listener only: right behind {@link #TLS}, counts and closes on its failures. */
  public static final String TLS_FAILURES = "tlsFailures";

  public static final String FLUSH_CONSOLIDATION = "flushConsolidation";
  public static final String IDLE = "idle";
  public static final String CONNECT_PROPERTY_SCAN = "connectPropertyScan";
  public static final String DECODE_BUDGET = "decodeBudget";
  public static final String DECODER = "mqttDecoder";
  public static final String DECODED = "decoded";
  public static final String PRE_CONNACK_LIMIT = "preConnackLimit";
  public static final String FLOW_CONTROL = "flowControl";
  public static final String ENCODER = "mqttEncoder";
  public static final String SESSION = "session";
  public static final String EXCEPTION_LAST = "exceptionLast";

  private PipelineNames() {}
}
