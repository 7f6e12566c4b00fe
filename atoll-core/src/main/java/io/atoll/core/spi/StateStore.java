package io.atoll.core.spi;

import io.atoll.core.FencingToken;

/**
 * Where durable entities keep their state: one record per entity (its type and id), holding the
 * greatest fencing token that has claimed or written it, a revision, and the state's bytes.
 *
 * <p>Every call is one atomic step on the store, so a stale activation can never write:
 * <ul>
 *   <li>{@link #claim} raises the record's token to the caller's, unless it already holds a greater
 *       one, and returns what is stored. Once an activation has claimed an entity, no activation with
 *       a smaller token can claim it or write it again.
 *   <li>{@link #save} writes new bytes, and raises the token, only if the record holds no greater
 *       token and its revision is the one the caller read; the revision then goes up by one. So no
 *       state ever goes backwards, and a write never overwrites one its writer did not see.
 * </ul>
 * Tokens compare by epoch, then by lease generation ({@link FencingToken#compareTo}); epochs are
 * the manager's, one counter for the whole cluster, so the tokens of one entity compare even if its
 * shard changed (a new hasher). A record that was never written has revision 0 and no bytes.
 *
 * <p>A call that fails with {@link StateStoreException.Reason#UNAVAILABLE} (a timeout, a lost
 * connection) may or may not have taken effect: the caller finds out with another {@link #claim}
 * under the same token, which returns whatever was stored last. Implementations are thread-safe.
 */
public interface StateStore extends AutoCloseable {

  /** The most bytes a state may have in any store. */
  int MAX_STATE_BYTES = 16 << 20;

  /**
   * Claims an entity for the activation holding {@code token} and reads its state.
   *
   * @return the stored revision and bytes; {@link StoredState#NONE} if nothing was ever saved
   * @throws StateStoreException {@code FENCED} if an activation with a greater token has claimed or
   *     written the entity; {@code UNAVAILABLE} if the store could not be reached or answer in time
   */
  StoredState claim(String type, String id, FencingToken token) throws StateStoreException;

  /**
   * Writes {@code state} as revision {@code revision + 1}, if the entity's record holds no greater
   * token than {@code token} and is at {@code revision}; raises the record's token to {@code token}.
   *
   * @param revision the revision the caller's state was read at (0: nothing was stored)
   * @param state at most {@link #MAX_STATE_BYTES} bytes
   * @return the new revision, {@code revision + 1}
   * @throws StateStoreException {@code FENCED} if a greater token has claimed or written the entity;
   *     {@code CONFLICT} if its revision is not {@code revision}; {@code UNAVAILABLE} as for
   *     {@link #claim}
   * @throws IllegalArgumentException if {@code state} is larger than {@link #MAX_STATE_BYTES} or
   *     {@code revision} is negative
   */
  long save(String type, String id, FencingToken token, long revision, byte[] state) throws StateStoreException;

  /** Releases connections; further calls fail. */
  @Override
  void close();

  /** Checks the arguments of {@link #save} as every store must. */
  static void checkSave(String type, String id, long revision, byte[] state) {
    if (revision < 0) {
      throw new IllegalArgumentException("state of " + type + "/" + id + ": revision " + revision + " (expected: >= 0)");
    }
    if (state.length > MAX_STATE_BYTES) {
      throw new IllegalArgumentException("state of " + type + "/" + id + ": " + state.length + " bytes (expected: at most "
          + MAX_STATE_BYTES + ")");
    }
  }
}
