package io.atoll.kv.internal.command;

import java.util.concurrent.atomic.LongAdder;

/** Counters for INFO stats. Thread-safe. */
public final class Stats {
  final LongAdder commands = new LongAdder();
  final LongAdder hits = new LongAdder();
  final LongAdder misses = new LongAdder();
  final LongAdder errors = new LongAdder();
  final LongAdder connections = new LongAdder();
  final LongAdder expired = new LongAdder();
  /** Writes that changed something (refused ones are not counted): Redis' "dirty" counter. */
  final LongAdder writes = new LongAdder();

  /** Counts a new connection. */
  public void connected() {
    connections.increment();
  }

  /** Writes executed without an error since start (what a snapshot counts changes by). */
  public long writes() {
    return writes.sum();
  }

  /** Counts keys removed by active expiry. */
  public void expired(long n) {
    expired.add(n);
  }
}
