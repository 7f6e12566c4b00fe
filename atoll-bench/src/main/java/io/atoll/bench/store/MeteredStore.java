package io.atoll.bench.store;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.ForwardingAssignmentStore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An assignment store that counts the manager's saves: how many, their bytes, their time (used by
 * the store share benchmark and the scale simulator). Everything else goes to the store as it is.
 * Thread-safe.
 */
public final class MeteredStore extends ForwardingAssignmentStore {

  private final AtomicLong saves = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong nanos = new AtomicLong();
  private final AtomicLong largest = new AtomicLong();

  public MeteredStore(AssignmentStore store) {
    super(store);
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
  public long save(byte[] data, long term, long expectedVersion) {
    long t0 = System.nanoTime();
    try {
      return super.save(data, term, expectedVersion);
    } finally {
      nanos.addAndGet(System.nanoTime() - t0);
      saves.incrementAndGet();
      bytes.addAndGet(data.length);
      largest.accumulateAndGet(data.length, Math::max);
    }
  }
}
