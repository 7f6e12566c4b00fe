package io.atoll.server.chaos;

import io.atoll.core.ShardHasher;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How long shards go without an acknowledged deposit, per fault window: the chaos run's measure of
 * unavailability. Every acknowledgement closes a gap for its shard (the time since the shard's
 * previous one); the longest gap that ends inside a window, or is still open when it closes, is
 * that window's figure. Its resolution is the time between deposits to one shard (the load's rate
 * over the number of shards), which the baseline window, without faults, shows. Shards that no
 * deposit has reached yet (the load's accounts need not cover every shard) are not counted.
 * Thread-safe.
 */
final class Availability {

  private final ShardHasher hasher;
  private final int shards;
  private final AtomicLongArray lastAck;
  private volatile long windowMax;
  private final Object lock = new Object();

  Availability(ShardHasher hasher, int shards) {
    this.hasher = hasher;
    this.shards = shards;
    this.lastAck = new AtomicLongArray(shards + 1); // 0: no acknowledgement yet
  }

  /** A deposit to {@code account} was acknowledged now. */
  void acked(String account) {
    int shard = hasher.shardOf(account, shards);
    long now = System.nanoTime();
    long last = lastAck.getAndSet(shard, now);
    long gap = last == 0 ? 0 : now - last;
    if (gap > windowMax) {
      synchronized (lock) {
        windowMax = Math.max(windowMax, gap);
      }
    }
  }

  /** Starts a window: gaps are counted from here. */
  void begin() {
    synchronized (lock) {
      windowMax = 0;
    }
  }

  /** Ends the window; returns its longest gap in milliseconds, counting gaps still open. */
  long end() {
    long now = System.nanoTime();
    synchronized (lock) {
      long max = windowMax;
      for (int s = 1; s <= shards; s++) {
        long last = lastAck.get(s);
        if (last != 0) {
          max = Math.max(max, now - last);
        }
      }
      return max / 1_000_000;
    }
  }
}
