package io.fieldline.cassandra.embedded;

/**
 * An embedded Cassandra node could not be configured, started or stopped. Start-up failures carry
 * the end of the node's logs in the message.
 */
public final class EmbeddedCassandraException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public EmbeddedCassandraException(String message) {
    super(message);
  }

  public EmbeddedCassandraException(String message, Throwable cause) {
    super(message, cause);
  }
}
