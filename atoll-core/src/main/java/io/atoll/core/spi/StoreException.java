package io.atoll.core.spi;

/** A store could not be read or written. The message names the store and what failed. */
public class StoreException extends RuntimeException {

  /** With a message naming the store and what failed. */
  public StoreException(String message) {
    super(message);
  }

  /** With a message naming the store and what failed, and the cause. */
  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
