package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import java.util.Optional;

/** {@link MemoryStore} for tests where the manager's threads use it. */
final class MemoryStoreThreadSafe implements AssignmentStore {

  private final MemoryStore store = new MemoryStore();

  @Override
  public synchronized Optional<Stored> load() {
    return store.load();
  }

  @Override
  public synchronized long save(byte[] data, long expectedVersion) {
    return store.save(data, expectedVersion);
  }

  synchronized long version() {
    return store.version();
  }

  synchronized void failSaves(int n) {
    store.failSaves(n, MemoryStore.Failure.BEFORE_WRITE);
  }

  synchronized void overwrite(byte[] bytes) {
    store.overwrite(bytes);
  }

  @Override
  public void close() {}
}
