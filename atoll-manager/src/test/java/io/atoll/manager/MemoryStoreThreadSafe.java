package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/** {@link MemoryStore} for tests where the manager's threads use it. */
final class MemoryStoreThreadSafe implements AssignmentStore {

  private final MemoryStore store = new MemoryStore();

  @Override
  public synchronized Optional<Stored> load() {
    return store.load();
  }

  @Override
  public synchronized long save(byte[] data, long term, long expectedVersion) {
    return store.save(data, term, expectedVersion);
  }

  @Override
  public synchronized Watch watch(long afterVersion, Consumer<Stored> onChange) {
    Watch w = store.watch(afterVersion, onChange);
    return () -> {
      synchronized (this) {
        w.close();
      }
    };
  }

  @Override
  public synchronized Optional<Lease> tryAcquire(String holder, Duration ttl) {
    return store.tryAcquire(holder, ttl);
  }

  @Override
  public synchronized boolean renew(Lease lease) {
    return store.renew(lease);
  }

  @Override
  public synchronized void release(Lease lease) {
    store.release(lease);
  }

  @Override
  public synchronized Optional<Leader> leader() {
    return store.leader();
  }

  synchronized long takeOver() {
    return store.takeOver();
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

  /** How often {@link #close} was called. */
  volatile int closes;

  @Override
  public synchronized void close() {
    closes++;
    store.close();
  }
}
