package io.atoll.server.chaos;

import io.atoll.core.ShardHasher;
import java.util.TreeMap;

/**
 * How long shards keep deposits waiting without acknowledging any, per fault window: the chaos
 * run's measure of unavailability. A shard is unavailable while a deposit to it is outstanding and
 * it acknowledges nothing. An acknowledgement closes such a span, from the sending of the oldest
 * deposit waiting or the shard's previous acknowledgement, whichever is later; a deposit that ends
 * without one (refused, timed out, failed) closes its own, from its sending at the earliest; a deposit
 * still outstanding when a window ends counts up to then. The longest span that ends inside a
 * window, or is still open when it closes, is that window's figure. A span is counted from the
 * window's start at the earliest: a previous window (its fault, or its recovery) has already
 * counted what came before as still open when it closed.
 *
 * <p>An idle shard is not unavailable: with one account in a shard and the load's rate spread over
 * a thousand accounts, seconds may pass between two deposits to it. (The figure before 2026-11-27
 * was the time between acknowledgements of a shard, idle or not; with sparse shards its noise
 * reached 5-9 s in windows without any fault at all.) Thread-safe.
 */
final class Availability implements io.atoll.server.demo.Load.Deposits {

  private final ShardHasher hasher;
  private final int shards;
  private final java.util.function.LongSupplier clock;
  private final Shard[] state;
  private final Object lock = new Object();
  private long windowStart;
  private long windowMax;
  /** The shard of the window's longest span so far, and when that span began (on the clock). */
  private int windowMaxShard;
  private long windowMaxFrom;

  /** One shard: when it last acknowledged, and the sending times of its deposits outstanding. */
  private static final class Shard {
    long lastAck;
    final TreeMap<Long, Integer> outstanding = new TreeMap<>();

    void add(long sentAt) {
      outstanding.merge(sentAt, 1, Integer::sum);
    }

    void remove(long sentAt) {
      outstanding.computeIfPresent(sentAt, (k, n) -> n == 1 ? null : n - 1);
    }
  }

  Availability(ShardHasher hasher, int shards) {
    this(hasher, shards, System::nanoTime);
  }

  /** As above, on {@code clock} (nanoseconds; sending times are on it too). */
  Availability(ShardHasher hasher, int shards, java.util.function.LongSupplier clock) {
    this.hasher = hasher;
    this.shards = shards;
    this.clock = clock;
    this.state = new Shard[shards + 1];
    for (int s = 1; s <= shards; s++) {
      state[s] = new Shard();
    }
    this.windowStart = clock.getAsLong();
  }

  /** A deposit to {@code account} was sent at {@code sentAt}. */
  @Override
  public void sent(String account, long sentAt) {
    Shard s = state[hasher.shardOf(account, shards)];
    synchronized (s) {
      s.add(sentAt);
    }
  }

  /**
   * The deposit to {@code account} sent at {@code sentAt} ended now: acknowledged, or not (refused,
   * timed out, failed).
   */
  @Override
  public void ended(String account, long sentAt, boolean acked) {
    int shard = hasher.shardOf(account, shards);
    Shard s = state[shard];
    long now = clock.getAsLong();
    long span;
    long began;
    synchronized (s) {
      // An acknowledgement ends the span of every deposit waiting, from the oldest; a failure only its own.
      long from = acked && !s.outstanding.isEmpty() ? Math.min(s.outstanding.firstKey(), sentAt) : sentAt;
      s.remove(sentAt);
      began = Math.max(from, s.lastAck);
      span = now - began;
      if (acked) {
        s.lastAck = Math.max(s.lastAck, now);
      }
    }
    synchronized (lock) {
      long counted = Math.min(span, now - windowStart);
      if (counted > windowMax) {
        windowMax = counted;
        windowMaxShard = shard;
        windowMaxFrom = Math.max(began, windowStart);
      }
    }
  }

  /** Starts a window: spans are counted from here. */
  void begin() {
    synchronized (lock) {
      windowStart = clock.getAsLong();
      windowMax = 0;
      windowMaxShard = 0;
      windowMaxFrom = windowStart;
    }
  }

  /** Ends the window; returns its longest span in milliseconds, counting deposits still outstanding. */
  long end() {
    return endWindow().millis();
  }

  /**
   * The longest span of a window: its length in milliseconds, its shard (0 if none) and when it
   * began, in milliseconds after the window's start.
   */
  record Longest(long millis, int shard, long fromMillis) {
    @Override
    public String toString() {
      return shard == 0 ? millis + " ms" : String.format("%,d ms (shard %d, from +%,d ms)", millis, shard, fromMillis);
    }
  }

  /** Ends the window, as {@link #end()}, and says which shard and when. */
  Longest endWindow() {
    long now = clock.getAsLong();
    synchronized (lock) {
      long max = windowMax;
      int shard = windowMaxShard;
      long from = windowMaxFrom;
      for (int i = 1; i <= shards; i++) {
        Shard s = state[i];
        synchronized (s) {
          if (!s.outstanding.isEmpty()) {
            long began = Math.max(Math.max(s.outstanding.firstKey(), s.lastAck), windowStart);
            if (now - began > max) {
              max = now - began;
              shard = i;
              from = began;
            }
          }
        }
      }
      return max <= 0 ? new Longest(0, 0, 0) : new Longest(max / 1_000_000, shard, (from - windowStart) / 1_000_000);
    }
  }
}
