package io.atoll.kv.internal.store;

/**
 * Hears every change to a slot's keys that the command which made it does not log itself, so an
 * append-only file can replay them in the order they happened. Each method is called holding the
 * slot's lock, so the records of one slot reach the journal in the order of the changes.
 */
public interface SlotJournal {
  /** Logs nothing. */
  SlotJournal NONE = new SlotJournal() {
    @Override
    public void stored(int slot, Key key, Entry entry) {
    }

    @Override
    public void removed(int slot, Key key) {
    }

    @Override
    public void expiry(int slot, Key key, long at) {
    }

    @Override
    public void cleared(int slot) {
    }

    @Override
    public void imported(int slot, io.atoll.core.PodId source, long floor) {
    }

    @Override
    public void lent(int slot, long batch, java.util.Collection<Key> keys) {
    }

    @Override
    public void settled(int slot) {
    }

    @Override
    public void returned(int slot, io.atoll.core.PodId from, long batch) {
    }

    @Override
    public void marked(int slot, io.atoll.core.PodId migrating, io.atoll.core.PodId importing) {
    }
  };

  /** {@code key} now holds {@code entry} (its value and expiry), whatever it held before. */
  void stored(int slot, Key key, Entry entry);

  /** {@code key} is gone: deleted, expired, or moved to another node. */
  void removed(int slot, Key key);

  /** {@code key}'s expiry is now {@code at} (epoch milliseconds; 0: none). */
  void expiry(int slot, Key key, long at);

  /** Every key of the slot is gone. */
  void cleared(int slot);

  /**
   * Managed mode: the slot's import record is now {@code source} and {@code floor} ({@code source}
   * null: none), so that a node restarted with the keys of a hand-off under way knows whose they are.
   */
  void imported(int slot, io.atoll.core.PodId source, long floor);

  /**
   * Managed mode, on a node returning a slot's keys: {@code keys} left the slot for the lent batch
   * {@code batch} (they are not deleted: until the source settles the batch they may still be
   * the only copy).
   */
  void lent(int slot, long batch, java.util.Collection<Key> keys);

  /** The slot's lent batch is settled: the source stored it, and its keys are gone from here. */
  void settled(int slot);

  /**
   * Managed mode, on the source of a return: the last batch of the slot it stored, from {@code
   * from} ({@code from} null: none, the return ended), so that the batch answered again after a
   * restart is not stored twice.
   */
  void returned(int slot, io.atoll.core.PodId from, long batch);

  /**
   * Managed mode: the slot's migration marks are now {@code migrating} and {@code importing}
   * (null: none), so that a replica holds its primary's marks and goes on with its hand-offs when
   * promoted.
   */
  void marked(int slot, io.atoll.core.PodId migrating, io.atoll.core.PodId importing);
}
