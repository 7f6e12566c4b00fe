package io.atoll.core;

/**
 * Thrown when bytes that should hold an encoded {@link ClusterConfig} do not. The message says what
 * was read and what was expected; nothing was changed.
 */
public final class MalformedConfigException extends IllegalArgumentException {

  /** Creates the exception with a message naming what was read and what was expected. */
  public MalformedConfigException(String message) {
    super(message);
  }
}
