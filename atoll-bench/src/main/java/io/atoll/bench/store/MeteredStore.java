package io.atoll.bench.store;

import io.atoll.core.spi.AssignmentStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * An assignment store that counts the manager's saves: how many, their bytes, their time (used by
 * the store share benchmark and the scale simulator). Everything else goes to the store as it is.
 * Thread-safe.
 */
public final class MeteredStore implements AssignmentStore {

  private final AssignmentStore store;
  private final AtomicLong saves = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong nanos = new AtomicLong();
  private final AtomicLong largest = new AtomicLong();

  public MeteredStore(AssignmentStore store) {
    this.store = store;
  }

  /** Saves since the start. */
  public long saves() {
    return saves.get();
  }

  /** Nanoseconds spent in saves since the start. */
  public long saveNanos() {
    return nanos.get();
  }

  /** Saves, bytes saved, nanoseconds spent saving, largest save in bytes, since the start. */
  public long[] totals() {
    return new long[] {saves.get(), bytes.get(), nanos.get(), largest.get()};
  }

  @Override
  public Optional<Stored> load() {
    return store.load();
  }

  @Override
  public long save(byte[] data, long term, long expectedVersion) {
    long t0 = System.nanoTime();
    try {
      return store.save(data, term, expectedVersion);
    } finally {
      nanos.addAndGet(System.nanoTime() - t0);
      saves.incrementAndGet();
      bytes.addAndGet(data.length);
      largest.accumulateAndGet(data.length, Math::max);
    }
  }

  @Override
  public Watch watch(long afterVersion, Consumer<Stored> onChange) {
    return store.watch(afterVersion, onChange);
  }

  @Override
  public Optional<Lease> tryAcquire(String holder, Duration ttl) {
    return store.tryAcquire(holder, ttl);
  }

  @Override
  public boolean renew(Lease lease) {
    return store.renew(lease);
  }

  @Override
  public void release(Lease lease) {
    store.release(lease);
  }

  @Override
  public Optional<Leader> leader() {
    return store.leader();
  }

  @Override
  public Watch watchLeader(Duration poll, LeaderListener listener) {
    return store.watchLeader(poll, listener);
  }

  @Override
  public int maxBytes() {
    return store.maxBytes();
  }

  @Override
  public void close() {
    store.close();
  }
}
