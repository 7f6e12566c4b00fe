package io.atoll.core.spi;

import io.atoll.core.FencingToken;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * A {@link StateStore} in this JVM's memory, for tests and examples: it keeps nothing across a
 * restart and is shared only by the pods of one JVM. Thread-safe; every call holds one lock.
 */
public final class InMemoryStateStore implements StateStore {

  private record Key(String type, String id) {}

  /** The greatest token that claimed or wrote the entity, its revision and bytes. */
  private record Entry(long epoch, long generation, long revision, byte[] bytes) {}

  private final Map<Key, Entry> entries = new HashMap<>();
  private boolean closed;

  @Override
  public synchronized StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
    checkOpen();
    Key k = new Key(type, id);
    Entry e = entries.get(k);
    if (e != null && greater(e, token)) {
      throw fenced(type, id, token, e);
    }
    entries.put(k, new Entry(token.epoch(), token.generation(), e == null ? 0 : e.revision, e == null ? null : e.bytes));
    return e == null || e.revision == 0 ? StoredState.NONE : new StoredState(e.revision, e.bytes.clone());
  }

  @Override
  public synchronized long save(String type, String id, FencingToken token, long revision, byte[] state)
      throws StateStoreException {
    StateStore.checkSave(type, id, revision, state);
    checkOpen();
    Key k = new Key(type, id);
    Entry e = entries.get(k);
    if (e != null && greater(e, token)) {
      throw fenced(type, id, token, e);
    }
    long stored = e == null ? 0 : e.revision;
    if (stored != revision) {
      throw new StateStoreException(StateStoreException.Reason.CONFLICT, "state of " + type + "/" + id
          + ": written at revision " + revision + " but the store holds revision " + stored);
    }
    entries.put(k, new Entry(token.epoch(), token.generation(), revision + 1, Arrays.copyOf(state, state.length)));
    return revision + 1;
  }

  private static boolean greater(Entry e, FencingToken token) {
    return e.epoch > token.epoch() || (e.epoch == token.epoch() && e.generation > token.generation());
  }

  private static StateStoreException fenced(String type, String id, FencingToken token, Entry e) {
    return new StateStoreException(StateStoreException.Reason.FENCED, "state of " + type + "/" + id
        + ": claimed by epoch " + e.epoch + " generation " + e.generation + ", newer than this activation's (epoch "
        + token.epoch() + " generation " + token.generation() + ")");
  }

  private void checkOpen() throws StateStoreException {
    if (closed) {
      throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, "the in-memory state store is closed");
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
  }
}
