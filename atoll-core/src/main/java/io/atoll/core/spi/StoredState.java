package io.atoll.core.spi;

import java.util.Arrays;

/**
 * An entity's state as a {@link StateStore} holds it.
 *
 * @param revision how many times it was saved; 0 if never
 * @param bytes the state's bytes; null if never saved
 */
public record StoredState(long revision, byte[] bytes) {

  /** Nothing saved yet. */
  public static final StoredState NONE = new StoredState(0, null);

  /** Checks that revision 0 goes with no bytes, and every other revision with some. */
  public StoredState {
    if (revision < 0 || (revision == 0) != (bytes == null)) {
      throw new IllegalArgumentException("stored state: revision " + revision + " with "
          + (bytes == null ? "no bytes" : bytes.length + " bytes") + " (expected: revision 0 without bytes, or > 0 with)");
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoredState s && s.revision == revision && Arrays.equals(s.bytes, bytes);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(revision) * 31 + Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return "StoredState[revision " + revision + (bytes == null ? ", none" : ", " + bytes.length + " bytes") + "]";
  }
}
