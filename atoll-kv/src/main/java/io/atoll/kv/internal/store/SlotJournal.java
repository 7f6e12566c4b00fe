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
}
