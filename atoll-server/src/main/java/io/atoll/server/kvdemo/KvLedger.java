package io.atoll.server.kvdemo;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the client knows it wrote: per key, the last value acknowledged, and the value of a write
 * whose outcome is unknown (it failed without a definite answer: it may or may not have landed).
 * Each key is written by one writer thread only, so its history is a sequence. Values are positive;
 * 0 means none.
 */
final class KvLedger {
  private final AtomicLongArray acked;
  private final AtomicLongArray unknown;

  KvLedger(int keys) {
    acked = new AtomicLongArray(keys);
    unknown = new AtomicLongArray(keys);
  }

  int size() {
    return acked.length();
  }

  static String key(int i) {
    return "kvdemo:" + i;
  }

  void acked(int key, long value) {
    acked.set(key, value);
    unknown.set(key, 0);
  }

  void unknown(int key, long value) {
    unknown.accumulateAndGet(key, value, Math::max);
  }

  long acked(int key) {
    return acked.get(key);
  }

  /** Whether {@code read} (null: no such key) is consistent with what was written. */
  boolean consistent(int key, String read) {
    long a = acked.get(key);
    long u = unknown.get(key);
    if (read == null) {
      return a == 0;
    }
    long v;
    try {
      v = Long.parseLong(read);
    } catch (NumberFormatException e) {
      return false;
    }
    // Values grow per key: any write after the last acknowledged one, up to the newest whose
    // outcome is unknown, may be what landed.
    return v == a || (u != 0 && v > a && v <= u);
  }
}
