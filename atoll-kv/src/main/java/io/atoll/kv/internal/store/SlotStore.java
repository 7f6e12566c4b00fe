package io.atoll.kv.internal.store;

import io.atoll.core.slots.KeySlots;

/**
 * All keys of a node, grouped by hash slot. The slot array is fixed at construction; each
 * {@link Slot} is guarded by its own monitor. Thread-safe in that sense.
 */
public final class SlotStore {
  private final Slot[] slots = new Slot[KeySlots.SLOT_COUNT];
  private final MemoryMeter meter = new MemoryMeter();
  private int expiryCursor;

  /** An empty store that logs nothing. */
  public SlotStore() {
    this(SlotJournal.NONE);
  }

  /** An empty store that tells {@code journal} of every change commands do not log themselves. */
  public SlotStore(SlotJournal journal) {
    for (int i = 0; i < slots.length; i++) {
      slots[i] = new Slot(i, meter, journal);
    }
  }

  /** The slot with this number (lock it before use). */
  public Slot slot(int id) {
    return slots[id];
  }

  /** The number of keys in all slots. */
  public long size() {
    return sum(Slot::size);
  }

  /** The number of keys with an expiry in all slots (expired ones not yet removed included). */
  public long volatileKeys() {
    return sum(Slot::volatileKeys);
  }

  /** Keys held out of service in all slots (their hand-off batch timed out; see {@link Slot#hold}). */
  public long heldKeys() {
    return sum(Slot::heldCount);
  }

  /** The sum of {@code count} over every slot, each read under its lock. */
  private long sum(java.util.function.ToLongFunction<Slot> count) {
    long n = 0;
    for (Slot s : slots) {
      synchronized (s) {
        n += count.applyAsLong(s);
      }
    }
    return n;
  }

  /** Estimated bytes held. */
  public long usedMemory() {
    return meter.used();
  }

  /**
   * Removes every key and every trace of hand-offs and returns (import records, lent batches, the
   * last returned batch stored, tokens): a managed node starting over as a new one.
   */
  public void forget() {
    for (Slot s : slots) {
      synchronized (s) {
        s.clear();
        s.imported(null, 0);
        s.returned(null, 0);
        s.marks(null, null);
        s.handOffToken(0);
        s.returnToken(0);
      }
    }
  }

  /**
   * Whether this store is a replica's: expired keys stay until the primary deletes them (see
   * {@link Slot#keepExpired}).
   */
  public void following(boolean on) {
    for (Slot s : slots) {
      synchronized (s) {
        s.keepExpired(on);
      }
    }
  }

  /** Removes every key. */
  public void clear() {
    for (Slot s : slots) {
      synchronized (s) {
        s.clear();
      }
    }
  }

  /**
   * One round of active expiry, Redis' idea: walk slots from where the last round stopped and
   * remove expired keys, until {@code maxSlots} slots with expiring keys were cleaned. Called
   * from one timer thread. Returns how many keys it removed.
   */
  public int expireCycle(long now, int maxSlots) {
    int removed = 0;
    int cleaned = 0;
    for (int i = 0; i < slots.length && cleaned < maxSlots; i++) {
      Slot s = slots[expiryCursor];
      expiryCursor = (expiryCursor + 1) & (slots.length - 1);
      synchronized (s) {
        if (s.hasVolatileKeys()) {
          removed += s.removeExpired(now);
          cleaned++;
        }
      }
    }
    return removed;
  }
}
