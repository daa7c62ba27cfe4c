package io.fieldline.kafka.embedded;

/**
 * An embedded Kafka broker could not be configured, formatted or started. Start-up failures carry
 * the end of the broker's log in the message.
 */
public final class EmbeddedKafkaException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public EmbeddedKafkaException(String message) {
    super(message);
  }

  public EmbeddedKafkaException(String message, Throwable cause) {
    super(message, cause);
  }
}
