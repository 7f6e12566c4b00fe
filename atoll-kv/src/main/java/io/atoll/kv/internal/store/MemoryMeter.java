package io.atoll.kv.internal.store;

import java.util.concurrent.atomic.LongAdder;

/** The estimated bytes the store holds, summed over slots. Thread-safe. */
public final class MemoryMeter {
  private final LongAdder bytes = new LongAdder();

  void add(long delta) {
    bytes.add(delta);
  }

  /** The estimate, in bytes. */
  public long used() {
    return bytes.sum();
  }
}
