package io.atoll.core.spi;

import java.util.Optional;

/**
 * Where the shard manager keeps its state: one versioned blob, replaced whole and atomically.
 *
 * <p>The store does not interpret the bytes. Its guarantees, checked by the store contract test
 * for every implementation:
 *
 * <ul>
 *   <li>{@link #load()} returns exactly the bytes of the last successful {@link #save}, or empty
 *       when nothing was ever saved — never a mix of two saves, even after a crash mid-save;
 *   <li>a save succeeds only if the stored version is the expected one (compare-and-set), so a
 *       deposed manager's write is refused;
 *   <li>a save that returned has reached durable storage.
 * </ul>
 *
 * <p>Implementations are thread-safe. Versions start at 0 (nothing stored) and grow by one per
 * successful save.
 */
public interface AssignmentStore extends AutoCloseable {

  /**
   * Reads the current state.
   *
   * @return the state, or empty when nothing was ever saved
   * @throws StoreException if the store cannot be read or holds unreadable data
   */
  Optional<Stored> load();

  /**
   * Replaces the state if the stored version is {@code expectedVersion}.
   *
   * @param data the new state, at most {@link #MAX_BYTES} bytes
   * @param expectedVersion the version this writer last loaded or saved (0 if none)
   * @return the new version, {@code expectedVersion + 1}
   * @throws StoreConflictException if another writer saved since {@code expectedVersion}
   * @throws StoreException if the write failed; the stored state is then unchanged or, if the
   *     failure was ambiguous, is one of the old and the new state
   */
  long save(byte[] data, long expectedVersion);

  /** Releases the store's resources (files, connections, locks). */
  @Override
  void close();

  /** The largest state a store must accept: 64 MiB. */
  int MAX_BYTES = 64 << 20;

  /**
   * A stored state.
   *
   * @param version the version of this state, at least 1
   * @param data the bytes saved
   */
  record Stored(long version, byte[] data) {}
}
