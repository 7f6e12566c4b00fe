package io.atoll.kv.internal.persist;

import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Copies the keys of a store into records, one slot at a time, each under its slot's lock: what a
 * rewrite's base and a snapshot hold. Each slot is copied as it was at one moment; as a command never
 * spans slots, no command is ever seen half done.
 */
public final class SlotCopy {

  private SlotCopy() {
  }

  /** Called holding a slot's lock, before its entries are copied. */
  @FunctionalInterface
  interface BeforeSlot {
    void at(int slot);
  }

  /**
   * Writes a record for every key of {@code store} not expired at {@code now} to {@code out}, in
   * chunks of about a megabyte; {@code before} runs holding each slot's lock. Returns the records.
   */
  static long copy(SlotStore store, long now, FileChannel out, BeforeSlot before) throws IOException {
    LogBuffer buf = new LogBuffer(1 << 20);
    long n = 0;
    for (int s = 0; s < io.atoll.core.slots.KeySlots.SLOT_COUNT; s++) {
      Slot slot = store.slot(s);
      synchronized (slot) {
        before.at(s);
        n += copySlot(slot, now, buf);
      }
      if (buf.length() >= 1 << 20) {
        writeAll(out, buf.view());
        buf.clear();
      }
    }
    writeAll(out, buf.view());
    return n;
  }

  /**
   * Appends to {@code buf} a record for every key of {@code slot} not expired at {@code now}, and
   * of its hand-off state; returns how many records. The caller holds the slot's lock.
   */
  public static long copySlot(Slot slot, long now, LogBuffer buf) {
    int s = slot.id();
    long[] n = {0};
    if (slot.importedFrom() != null) {
      buf.record(importRecord(s, slot.importedFrom(), slot.importFloor()));
      n[0]++;
    }
    slot.forEachEntry((k, e) -> {
      if (e.expireAt == 0 || e.expireAt > now) {
        encode(buf, k, e);
        n[0]++;
      }
    });
    if (slot.lentBatch() != 0) { // stored, then lent again: a replay leaves them as they are
      java.util.Map<Key, Entry> lent = slot.lentAll();
      lent.forEach((k, e) -> encode(buf, k, e));
      buf.record(lendRecord(s, slot.lentBatch(), lent.keySet()));
      n[0] += lent.size() + 1;
    }
    if (slot.returnedFrom() != null) {
      buf.record(returnedRecord(s, slot.returnedFrom(), slot.returnedBatch()));
      n[0]++;
    }
    if (slot.migratingTo() != null || slot.importingFrom() != null) {
      for (byte[][] r : markRecords(s, slot.migratingTo(), slot.importingFrom())) {
        buf.record(r);
        n[0]++;
      }
    }
    return n[0];
  }

  /**
   * A slot's migration marks as two log records: {@code ATOLL-MIGRATING-MARK slot [host port
   * incarnation-hex 0]} and {@code ATOLL-IMPORTING-MARK slot [...]}, each without a peer for none.
   */
  static byte[][][] markRecords(int slot, io.atoll.core.PodId migrating, io.atoll.core.PodId importing) {
    return new byte[][][] {peerRecord(Dispatcher.MIGRATING_MARK, slot, migrating, 0),
        peerRecord(Dispatcher.IMPORTING_MARK, slot, importing, 0)};
  }

  /**
   * A slot's import record ({@code source} null: none) as a log record: {@code ATOLL-IMPORTED slot
   * [host port incarnation-hex floor]}.
   */
  static byte[][] importRecord(int slot, io.atoll.core.PodId source, long floor) {
    return peerRecord(Dispatcher.IMPORTED, slot, source, floor);
  }

  /** {@code NAME slot [host port incarnation-hex n]}: a slot's state naming a peer, none without one. */
  private static byte[][] peerRecord(String name, int slot, io.atoll.core.PodId peer, long n) {
    byte[] upper = name.toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.US_ASCII);
    if (peer == null) {
      return new byte[][] {upper, ascii(slot)};
    }
    return new byte[][] {upper, ascii(slot), peer.address().host().getBytes(StandardCharsets.UTF_8),
        ascii(peer.address().port()), Long.toHexString(peer.incarnation()).getBytes(StandardCharsets.US_ASCII),
        ascii(n)};
  }

  /** A lent batch as a log record: {@code ATOLL-LENT slot batch key...}. */
  static byte[][] lendRecord(int slot, long batch, java.util.Collection<Key> keys) {
    byte[][] r = new byte[3 + keys.size()][];
    r[0] = Dispatcher.LENT.toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.US_ASCII);
    r[1] = ascii(slot);
    r[2] = ascii(batch);
    int i = 3;
    for (Key k : keys) {
      r[i++] = k.bytes();
    }
    return r;
  }

  /** The last returned batch stored, as a log record: {@code ATOLL-RETURNED slot [host port incarnation-hex batch]}. */
  static byte[][] returnedRecord(int slot, io.atoll.core.PodId from, long batch) {
    return peerRecord(Dispatcher.RETURNED, slot, from, batch);
  }

  /** A key's whole value and expiry as one record: SET (with PXAT) or ATOLL-SETHASH. */
  public static void encode(LogBuffer out, Key key, Entry entry) {
    byte[] k = key.bytes();
    if (entry.isString()) {
      if (entry.expireAt == 0) {
        out.record(SET, k, entry.string());
      } else {
        out.record(SET, k, entry.string(), PXAT, ascii(entry.expireAt));
      }
      return;
    }
    // One record, so a crash cannot leave the key half replaced (DEL and HSET would be two).
    Map<Key, byte[]> h = entry.hash();
    byte[][] args = new byte[3 + 2 * h.size()][];
    args[0] = SET_HASH;
    args[1] = k;
    args[2] = ascii(entry.expireAt);
    int i = 3;
    for (Map.Entry<Key, byte[]> f : h.entrySet()) {
      args[i++] = f.getKey().bytes();
      args[i++] = f.getValue();
    }
    out.record(args);
  }

  static void writeAll(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  public static byte[] ascii(long n) {
    return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
  }

  private static final byte[] SET = "SET".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PXAT = "PXAT".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SET_HASH = Dispatcher.SET_HASH.toUpperCase(java.util.Locale.ROOT)
      .getBytes(StandardCharsets.US_ASCII);
}
