package io.atoll.server.chaos;

import io.atoll.core.ShardHasher;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How long shards go without an acknowledged deposit, per fault window: the chaos run's measure of
 * unavailability. Every acknowledgement closes a gap for its shard (the time since the shard's
 * previous one, or since the window began if that was later); the longest gap that ends inside a
 * window, or is still open when it closes, is that window's figure. A gap is counted from the
 * window's start at the earliest: what a shard went without before, a previous window (its fault,
 * or its recovery) has already counted as still open when it closed. Its resolution is the time
 * between deposits to one shard (the load's rate over the number of shards), which the baseline
 * window, without faults, shows. Shards that no deposit has reached yet (the load's accounts need
 * not cover every shard) are not counted. Thread-safe.
 */
final class Availability {

  private final ShardHasher hasher;
  private final int shards;
  private final java.util.function.LongSupplier clock;
  private final AtomicLongArray lastAck;
  private volatile long windowStart;
  private volatile long windowMax;
  private final Object lock = new Object();

  Availability(ShardHasher hasher, int shards) {
    this(hasher, shards, System::nanoTime);
  }

  /** As above, on {@code clock} (nanoseconds). */
  Availability(ShardHasher hasher, int shards, java.util.function.LongSupplier clock) {
    this.hasher = hasher;
    this.shards = shards;
    this.clock = clock;
    this.lastAck = new AtomicLongArray(shards + 1); // 0: no acknowledgement yet
    this.windowStart = clock.getAsLong();
  }

  /** A deposit to {@code account} was acknowledged now. */
  void acked(String account) {
    int shard = hasher.shardOf(account, shards);
    long now = clock.getAsLong();
    long last = lastAck.getAndSet(shard, now);
    long gap = last == 0 ? 0 : now - Math.max(last, windowStart);
    if (gap > windowMax) {
      synchronized (lock) {
        windowMax = Math.max(windowMax, gap);
      }
    }
  }

  /** Starts a window: gaps are counted from here. */
  void begin() {
    synchronized (lock) {
      windowStart = clock.getAsLong();
      windowMax = 0;
    }
  }

  /** Ends the window; returns its longest gap in milliseconds, counting gaps still open. */
  long end() {
    long now = clock.getAsLong();
    synchronized (lock) {
      long max = windowMax;
      for (int s = 1; s <= shards; s++) {
        long last = lastAck.get(s);
        if (last != 0) {
          max = Math.max(max, now - Math.max(last, windowStart));
        }
      }
      return max / 1_000_000;
    }
  }
}
