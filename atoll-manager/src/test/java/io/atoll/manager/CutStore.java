package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StoreException;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * One manager's handle on a shared store, which can be cut: from then on every call of this
 * handle fails as if the store could not be reached, while other handles work (a partition
 * between one manager and the store).
 */
final class CutStore implements AssignmentStore {

  private final AssignmentStore store;
  private boolean cut;

  CutStore(AssignmentStore store) {
    this.store = store;
  }

  /** Every later call of this handle fails (or, with {@code false}, works again). */
  void cut(boolean on) {
    cut = on;
  }

  private void check() {
    if (cut) {
      throw new StoreException("store unreachable (cut off)");
    }
  }

  @Override
  public Optional<Stored> load() {
    check();
    return store.load();
  }

  @Override
  public long save(byte[] data, long term, long expectedVersion) {
    check();
    return store.save(data, term, expectedVersion);
  }

  @Override
  public Watch watch(long afterVersion, Consumer<Stored> onChange) {
    check();
    return store.watch(afterVersion, onChange);
  }

  @Override
  public Optional<Lease> tryAcquire(String holder, Duration ttl) {
    check();
    return store.tryAcquire(holder, ttl);
  }

  @Override
  public boolean renew(Lease lease) {
    check();
    return store.renew(lease);
  }

  @Override
  public void release(Lease lease) {
    check();
    store.release(lease);
  }

  @Override
  public Optional<Leader> leader() {
    check();
    return store.leader();
  }

  @Override
  public void close() {
    if (!cut) {
      store.close();
    }
  }
}
