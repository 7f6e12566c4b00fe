package io.atoll.kv.internal.persist;

import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.SlotJournal;
import java.nio.charset.StandardCharsets;

/**
 * A {@link SlotJournal} that turns each change into the record a log holds for it (DEL,
 * PEXPIREAT, PERSIST, Atoll's slot records), as the append-only file and the replication stream
 * both write them; the subclass appends the records, and writes a stored key whole ({@link
 * SlotCopy#encode}).
 */
public abstract class RecordJournal implements SlotJournal {

  /** Appends one record (called holding the slot's lock of the change). */
  protected abstract void record(byte[]... args);

  @Override
  public void removed(int slot, Key key) {
    record(DEL, key.bytes());
  }

  @Override
  public void expiry(int slot, Key key, long at) {
    if (at == 0) {
      record(PERSIST, key.bytes());
    } else {
      record(PEXPIREAT, key.bytes(), SlotCopy.ascii(at));
    }
  }

  @Override
  public void cleared(int slot) {
    record(FLUSH_SLOT, SlotCopy.ascii(slot));
  }

  @Override
  public void imported(int slot, io.atoll.core.PodId source, long floor) {
    record(SlotCopy.importRecord(slot, source, floor));
  }

  @Override
  public void lent(int slot, long batch, java.util.Collection<Key> keys) {
    record(SlotCopy.lendRecord(slot, batch, keys));
  }

  @Override
  public void settled(int slot) {
    record(SETTLED, SlotCopy.ascii(slot));
  }

  @Override
  public void returned(int slot, io.atoll.core.PodId from, long batch) {
    record(SlotCopy.returnedRecord(slot, from, batch));
  }

  @Override
  public void marked(int slot, io.atoll.core.PodId migrating, io.atoll.core.PodId importing) {
    for (byte[][] r : SlotCopy.markRecords(slot, migrating, importing)) {
      record(r);
    }
  }

  /**
   * The slot a record is about: its key's, or the number of one of Atoll's slot records (every
   * logged write's first key is its first argument).
   */
  public static int slotOf(byte[][] args) {
    String name = new String(args[0], StandardCharsets.US_ASCII);
    if (name.equalsIgnoreCase(Dispatcher.FLUSH_SLOT) || name.equalsIgnoreCase(Dispatcher.IMPORTED)
        || name.equalsIgnoreCase(Dispatcher.LENT) || name.equalsIgnoreCase(Dispatcher.SETTLED)
        || name.equalsIgnoreCase(Dispatcher.RETURNED) || name.equalsIgnoreCase(Dispatcher.MIGRATING_MARK)
        || name.equalsIgnoreCase(Dispatcher.IMPORTING_MARK)) {
      return Integer.parseInt(new String(args[1], StandardCharsets.US_ASCII));
    }
    return io.atoll.core.slots.KeySlots.slotOf(args[1]);
  }

  private static final byte[] DEL = "DEL".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PEXPIREAT = "PEXPIREAT".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PERSIST = "PERSIST".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FLUSH_SLOT = Dispatcher.FLUSH_SLOT.toUpperCase(java.util.Locale.ROOT)
      .getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SETTLED = Dispatcher.SETTLED.toUpperCase(java.util.Locale.ROOT)
      .getBytes(StandardCharsets.US_ASCII);
}
