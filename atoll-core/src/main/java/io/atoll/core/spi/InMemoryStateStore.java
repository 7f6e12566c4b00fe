package io.atoll.core.spi;

import io.atoll.core.FencingToken;
import java.util.HashMap;
import java.util.Map;

/**
 * A {@link StateStore} in this JVM's memory, for tests and examples: it keeps nothing across a
 * restart and is shared only by the pods of one JVM. Thread-safe; every call holds one lock.
 */
public final class InMemoryStateStore implements StateStore {

  private record Key(String type, String id) {}

  /** The greatest token that claimed or wrote the entity, and what is stored. */
  private record Entry(FencingToken token, StoredState state) {}

  private final Map<Key, Entry> entries = new HashMap<>();
  private boolean closed;

  @Override
  public synchronized StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
    StoredState stored = current(type, id, token).state();
    entries.put(new Key(type, id), new Entry(token, stored));
    return stored.bytes() == null ? stored : new StoredState(stored.revision(), stored.bytes().clone());
  }

  @Override
  public synchronized long save(String type, String id, FencingToken token, long revision, byte[] state)
      throws StateStoreException {
    StateStore.checkSave(type, id, revision, state);
    long stored = current(type, id, token).state().revision();
    if (stored != revision) {
      throw new StateStoreException(StateStoreException.Reason.CONFLICT, "state of " + type + "/" + id
          + ": written at revision " + revision + " but the store holds revision " + stored);
    }
    entries.put(new Key(type, id), new Entry(token, new StoredState(revision + 1, state.clone())));
    return revision + 1;
  }

  /** The entity's entry (nothing stored, if none), unless a token greater than {@code token} holds it. */
  private Entry current(String type, String id, FencingToken token) throws StateStoreException {
    if (closed) {
      throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, "the in-memory state store is closed");
    }
    Entry e = entries.getOrDefault(new Key(type, id), new Entry(token, StoredState.NONE));
    if (e.token().compareTo(token) > 0) {
      throw new StateStoreException(StateStoreException.Reason.FENCED, "state of " + type + "/" + id
          + ": claimed by epoch " + e.token().epoch() + " generation " + e.token().generation()
          + ", newer than this activation's (epoch " + token.epoch() + " generation " + token.generation() + ")");
    }
    return e;
  }

  @Override
  public synchronized void close() {
    closed = true;
  }
}
