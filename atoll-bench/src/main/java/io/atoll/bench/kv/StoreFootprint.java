package io.atoll.bench.kv;

import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Atoll KV's storage candidates, measured the simple way: heap bytes per small key after a full GC,
 * and single-thread SET and GET operations per second (key hashing to its slot included), for
 * 1 M keys of 14 bytes with 5-byte values.
 *
 * <ul>
 *   <li>{@code slot-store}: what Atoll KV uses, one {@code HashMap<Key, Entry>} per slot, each
 *       under its own monitor;
 *   <li>{@code chm-bytes}: one {@code ConcurrentHashMap<Key, byte[]>} for the whole node, no
 *       expiry field and no grouping by slot.
 * </ul>
 *
 * <p>Run: {@code java -Xmx2g -XX:+UseParallelGC -cp atoll-bench/target/benchmarks.jar
 * io.atoll.bench.kv.StoreFootprint}
 */
public final class StoreFootprint {
  private static final int KEYS = 1_000_000;

  private StoreFootprint() {}

  /** Prints one line per candidate. */
  public static void main(String[] args) {
    byte[][] keys = new byte[KEYS][];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = String.format(Locale.ROOT, "key:%010d", i).getBytes(StandardCharsets.US_ASCII);
    }
    byte[] value = "value".getBytes(StandardCharsets.US_ASCII);
    for (int round = 0; round < 2; round++) { // the first round warms the JIT
      slotStore(keys, value, round == 1);
      chmBytes(keys, value, round == 1);
    }
  }

  private static void slotStore(byte[][] keys, byte[] value, boolean print) {
    long before = usedAfterGc();
    SlotStore store = new SlotStore();
    long t0 = System.nanoTime();
    for (byte[] k : keys) {
      Slot s = store.slot(KeySlots.slotOf(k));
      synchronized (s) {
        s.put(new Key(k), new Entry(value));
      }
    }
    long t1 = System.nanoTime();
    long hits = 0;
    for (byte[] k : keys) {
      Slot s = store.slot(KeySlots.slotOf(k));
      synchronized (s) {
        hits += s.get(new Key(k), 0) != null ? 1 : 0;
      }
    }
    long t2 = System.nanoTime();
    long after = usedAfterGc();
    report(print, "slot-store", before, after, t0, t1, t2, hits, store.size());
  }

  private static void chmBytes(byte[][] keys, byte[] value, boolean print) {
    long before = usedAfterGc();
    ConcurrentHashMap<Key, byte[]> map = new ConcurrentHashMap<>();
    long t0 = System.nanoTime();
    for (byte[] k : keys) {
      KeySlots.slotOf(k); // routing costs the same in both
      map.put(new Key(k), value);
    }
    long t1 = System.nanoTime();
    long hits = 0;
    for (byte[] k : keys) {
      KeySlots.slotOf(k);
      hits += map.get(new Key(k)) != null ? 1 : 0;
    }
    long t2 = System.nanoTime();
    long after = usedAfterGc();
    report(print, "chm-bytes", before, after, t0, t1, t2, hits, map.size());
  }

  private static void report(boolean print, String name, long before, long after, long t0, long t1, long t2,
      long hits, long size) {
    if (!print) {
      return;
    }
    // The value array is shared by every key here; a real SET holds its own: add 24 bytes.
    System.out.printf(Locale.ROOT, "%-11s %6.1f bytes/key (+24 for an own 5-byte value)  SET %5.2f M/s  GET %5.2f M/s"
        + "  (%d keys, %d hits)%n", name, (after - before) / (double) KEYS, KEYS / ((t1 - t0) / 1e3),
        KEYS / ((t2 - t1) / 1e3), size, hits);
  }

  private static long usedAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
