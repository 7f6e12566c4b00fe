package io.atoll.core.spi;

/**
 * A save was refused because another writer saved first: the expected version is not the stored
 * one. The writer has been deposed or is behind; it must reload before it writes again.
 */
public class StoreConflictException extends StoreException {

  private final long expected;
  private final long actual;

  /** For an expected and an actual stored version. */
  public StoreConflictException(String store, long expected, long actual) {
    super(store + ": version " + actual + " is stored (expected: " + expected
        + "); another manager wrote since, reload before writing");
    this.expected = expected;
    this.actual = actual;
  }

  /** With a message of a subclass's own, and the expected and actual values it compares. */
  protected StoreConflictException(long expected, long actual, String message) {
    super(message);
    this.expected = expected;
    this.actual = actual;
  }

  /** The version (or term) the writer expected. */
  public long expected() {
    return expected;
  }

  /** The version (or term) found in the store. */
  public long actual() {
    return actual;
  }
}
