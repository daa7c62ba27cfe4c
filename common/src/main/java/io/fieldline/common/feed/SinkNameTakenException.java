package io.fieldline.common.feed;

/** A sink's name is already used by another sink. */
public final class SinkNameTakenException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public SinkNameTakenException(String name) {
    super("a sink named '" + name + "' already exists");
  }
}
