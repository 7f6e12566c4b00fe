package io.atoll.kv.internal.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The keys of one hash slot. Every method must be called while holding this object's monitor
 * ({@code synchronized (slot)}); commands on keys of one slot therefore run one at a time, and
 * commands on different slots in parallel.
 */
public final class Slot {

  /** A client watching keys (WATCH): told, holding the slot's lock, when one of them changes. */
  @FunctionalInterface
  public interface Watcher {
    void touched();
  }

  private final int id;
  private final MemoryMeter meter;
  private final SlotJournal journal;
  /**
   * True while a command runs that logs itself whole (its arguments replay to the same result):
   * its changes are not logged one by one. A key it finds expired is logged all the same, first.
   */
  private boolean selfLogged;
  private boolean keepExpired;
  /** Clients watching keys of this slot (WATCH), by key; null while none does. */
  private HashMap<Key, ArrayList<Watcher>> watchers;
  private final HashMap<Key, Entry> map = new HashMap<>();
  private int volatileKeys;
  /**
   * Managed mode, on a node returning this slot's keys to their source: the batch handed over and
   * not yet acknowledged, out of {@link #map} (no command sees them; routing answers TRYAGAIN for
   * them) until the source says it stored them ({@link #settle}) or the return is abandoned
   * ({@link #clear}).
   */
  private final HashMap<Key, Entry> lent = new HashMap<>();
  private long lentBatch;
  /** The source's token of the return under way (0: none): requests of an older return are refused. */
  private long returnToken;
  /**
   * Managed mode, on a node that imports this slot without owning it: the source of the hand-off
   * whose keys it holds, and the epoch of the config the hand-off was planned on (see {@code
   * cluster.Imports}); null and 0 when none.
   */
  private io.atoll.core.PodId importedFrom;
  private long importFloor;
  /**
   * Managed mode: this node's migration marks of the slot as its log and stream carry them (the
   * node's view holds the marks it routes by; see {@code cluster.MarkRecords}): the node the slot's
   * keys move to, and the node they arrive from; null when none. A replica holds its primary's
   * here, mirrored, and routes by them once promoted.
   */
  private io.atoll.core.PodId migratingTo;
  private io.atoll.core.PodId importingFrom;
  /** Managed mode, on the source of a return: the last returned batch stored here, and its sender. */
  private io.atoll.core.PodId returnedFrom;
  private long returnedBatch;
  /**
   * Managed mode, on the target: the token of the hand-off attempt whose RESTORE-ASKING requests
   * this slot accepts (0: none; a new attempt or a return fences the older one).
   */
  private long handOffToken;
  /**
   * Managed mode, on the source: keys of a batch whose RESTORE-ASKING answers timed out, and the
   * target they were sent to. They stay in {@link #map} (this node's copy, or its absence, is the
   * one clients were served), but routing answers TRYAGAIN for them until they are sent again under
   * a newer attempt, since a late copy may have reached the target; see {@code cluster.Migrator}.
   */
  private final java.util.LinkedHashSet<Key> held = new java.util.LinkedHashSet<>();
  // Volatile: a hand-off reads it before asking its target, without the slot's lock while nothing
  // is held for another node (only a hand-off of this slot, one at a time, sets it).
  private volatile io.atoll.core.PodId heldFor;

  Slot(int id, MemoryMeter meter, SlotJournal journal) {
    this.id = id;
    this.meter = meter;
    this.journal = journal;
  }

  /**
   * Marks whether the command running now (holding this slot's lock) logs itself whole, so the
   * changes it makes are not logged one by one. Reset it when the command ends.
   */
  public void selfLogged(boolean on) {
    selfLogged = on;
  }

  /**
   * A replica's slot: a key found expired is not there for a reader but stays until its primary's
   * DEL arrives, as Redis' replicas have it (else a replica whose clock runs ahead drops a key its
   * primary then keeps, PERSIST or not); {@link #removeExpired} removes nothing.
   */
  void keepExpired(boolean on) {
    keepExpired = on;
  }

  /** This slot's number. */
  public int id() {
    return id;
  }

  /** The live entry of {@code key} at {@code now}, removing it if it has expired. */
  public Entry get(Key key, long now) {
    Entry e = map.get(key);
    if (e != null && e.expireAt != 0 && e.expireAt <= now) {
      if (keepExpired) {
        return null; // a replica: its primary's DEL removes it, in the primary's order
      }
      drop(key);
      journal.removed(id, key); // also within a command that logs itself: the expiry comes first
      return null;
    }
    return e;
  }

  /** Stores {@code entry} under {@code key}, replacing any entry. */
  public void put(Key key, Entry entry) {
    Entry old = map.put(key, entry);
    if (old != null) {
      meter.add(-old.valueBytes());
      if (old.expireAt != 0) {
        volatileKeys--;
      }
    } else {
      meter.add(keyBytes(key));
    }
    meter.add(entry.valueBytes());
    if (entry.expireAt != 0) {
      volatileKeys++;
    }
    if (!selfLogged) {
      journal.stored(id, key, entry);
    }
    touch(key);
  }

  /** Removes {@code key}; its entry or null. */
  public Entry remove(Key key) {
    Entry old = drop(key);
    if (old != null && !selfLogged) {
      journal.removed(id, key);
    }
    return old;
  }

  private Entry drop(Key key) {
    Entry old = map.remove(key);
    if (old != null) {
      meter.add(-old.valueBytes() - keyBytes(key));
      if (old.expireAt != 0) {
        volatileKeys--;
      }
      touch(key);
    }
    return old;
  }

  /** Sets the expiry of {@code key}'s live entry {@code e} (0: persist). */
  public void expire(Key key, Entry e, long at) {
    if (e.expireAt != 0) {
      volatileKeys--;
    }
    e.expireAt = at;
    if (at != 0) {
      volatileKeys++;
    }
    if (!selfLogged) {
      journal.expiry(id, key, at);
    }
    touch(key);
  }

  /** Tells the meter a value grew or shrank by {@code delta} bytes in place. */
  public void resized(long delta) {
    meter.add(delta);
  }

  /** {@code key}'s value was changed in place (a hash's fields): its watchers are told. */
  public void changed(Key key) {
    touch(key);
  }

  /** {@code w} watches {@code key} (WATCH) until {@link #unwatch}. */
  public void watch(Key key, Watcher w) {
    if (watchers == null) {
      watchers = new HashMap<>();
    }
    watchers.computeIfAbsent(key, k -> new ArrayList<>(2)).add(w);
  }

  /** {@code w} no longer watches {@code key}. */
  public void unwatch(Key key, Watcher w) {
    if (watchers == null) {
      return;
    }
    ArrayList<Watcher> l = watchers.get(key);
    if (l != null) {
      l.remove(w);
      if (l.isEmpty()) {
        watchers.remove(key);
      }
    }
    if (watchers.isEmpty()) {
      watchers = null;
    }
  }

  private void touch(Key key) {
    if (watchers != null) {
      ArrayList<Watcher> l = watchers.get(key);
      if (l != null) {
        for (Watcher w : l) {
          w.touched();
        }
      }
    }
  }

  /** The number of keys, expired ones not yet removed included. */
  public int size() {
    return map.size();
  }

  /** Calls {@code each} with every entry, expired ones not yet removed included (hold the lock). */
  public void forEachEntry(java.util.function.BiConsumer<Key, Entry> each) {
    map.forEach(each);
  }

  /** The live keys at {@code now}, at most {@code limit}. */
  public List<byte[]> keys(long now, int limit) {
    List<byte[]> result = new ArrayList<>(Math.min(limit, map.size()));
    for (Map.Entry<Key, Entry> e : map.entrySet()) {
      if (result.size() >= limit) {
        break;
      }
      long at = e.getValue().expireAt;
      if (at == 0 || at > now) {
        result.add(e.getKey().bytes());
      }
    }
    return result;
  }

  /** Removes the entries expired at {@code now}; how many. */
  public int removeExpired(long now) {
    if (volatileKeys == 0 || keepExpired) {
      return 0;
    }
    int n = 0;
    for (Iterator<Map.Entry<Key, Entry>> it = map.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Key, Entry> e = it.next();
      long at = e.getValue().expireAt;
      if (at != 0 && at <= now) {
        it.remove();
        volatileKeys--;
        meter.add(-e.getValue().valueBytes() - keyBytes(e.getKey()));
        journal.removed(id, e.getKey());
        touch(e.getKey());
        n++;
      }
    }
    return n;
  }

  /** How many keys have an expiry (expired ones not yet removed included). */
  public int volatileKeys() {
    return volatileKeys;
  }

  /** Whether some key has an expiry. */
  public boolean hasVolatileKeys() {
    return volatileKeys > 0;
  }

  /** Removes every key. */
  public void clear() {
    long bytes = 0;
    for (Map.Entry<Key, Entry> e : map.entrySet()) {
      bytes += e.getValue().valueBytes() + keyBytes(e.getKey());
    }
    meter.add(-bytes);
    if ((!map.isEmpty() || lentBatch != 0) && !selfLogged) {
      journal.cleared(id); // a lent batch goes too
    }
    if (watchers != null) {
      for (Key k : new ArrayList<>(watchers.keySet())) {
        if (map.containsKey(k)) {
          touch(k); // as Redis' FLUSHALL: a watched key that existed
        }
      }
    }
    map.clear();
    lent.clear();
    lentBatch = 0;
    volatileKeys = 0;
    // Held keys stay held, on purpose: a late copy of one may sit on the hand-off's target, and
    // -ASK would find it once the key is gone here. Held, it answers TRYAGAIN until the next
    // attempt sends it again, as a restore that deletes it there (it is gone here).
  }

  /** Whether {@code key} is in the batch lent to the slot's source and not yet acknowledged. */
  public boolean isLent(Key key) {
    return lent.containsKey(key);
  }

  /** The id of the lent batch (0: none). */
  public long lentBatch() {
    return lentBatch;
  }

  /**
   * The lent batch's entries live at {@code now} (a copy): a key that expired while lent is not
   * sent again (it would come back with a fresh millisecond to live).
   */
  public Map<Key, Entry> lentEntries(long now) {
    Map<Key, Entry> live = new HashMap<>();
    lent.forEach((k, e) -> {
      if (e.expireAt == 0 || e.expireAt > now) {
        live.put(k, e);
      }
    });
    return live;
  }

  /**
   * Moves up to {@code limit} live keys out of the slot into a new lent batch {@code batch}, which
   * must be nonzero, and returns the number lent; expired keys are dropped. Only when nothing is
   * lent already.
   *
   * @throws IllegalStateException if a batch is lent already
   */
  public int lend(long now, int limit, long batch) {
    if (!lent.isEmpty()) {
      throw new IllegalStateException("batch " + lentBatch + " is lent already (expected: settled first)");
    }
    for (byte[] k : keys(now, limit)) {
      Key key = new Key(k);
      Entry e = drop(key); // not a deletion: logged as lent
      if (e != null) {
        lent.put(key, e);
      }
    }
    lentBatch = lent.isEmpty() ? 0 : batch;
    if (lentBatch != 0) {
      journal.lent(id, lentBatch, lent.keySet());
    }
    return lent.size();
  }

  /** Replays a logged lend: {@code keys} move out of the slot into the lent batch {@code batch}. */
  public void relend(long batch, java.util.Collection<Key> keys) {
    lent.clear();
    for (Key key : keys) {
      Entry e = drop(key);
      if (e != null) {
        lent.put(key, e);
      }
    }
    lentBatch = lent.isEmpty() ? 0 : batch;
  }

  /** The lent batch's entries, expired ones included (a copy), for a rewrite of the log. */
  public Map<Key, Entry> lentAll() {
    return new HashMap<>(lent);
  }

  /** The source of the last returned batch stored here, or null (see {@link #returned}). */
  public io.atoll.core.PodId returnedFrom() {
    return returnedFrom;
  }

  /** The id of the last returned batch stored here (0: none). */
  public long returnedBatch() {
    return returnedBatch;
  }

  /**
   * Records the last returned batch stored here ({@code from} null: none, the return ended): a
   * batch answered again after a lost settlement is not stored twice.
   */
  public void returned(io.atoll.core.PodId from, long batch) {
    long b = from == null ? 0 : batch;
    if (java.util.Objects.equals(returnedFrom, from) && returnedBatch == b) {
      return;
    }
    returnedFrom = from;
    returnedBatch = b;
    journal.returned(id, from, b);
  }

  /** Drops the lent batch {@code batch} (the source stored it); false if another one is lent. */
  public boolean settle(long batch) {
    if (batch == 0 || batch != lentBatch) {
      return false;
    }
    lent.clear();
    lentBatch = 0;
    journal.settled(id);
    return true;
  }

  /** The token of the return under way, 0 if none. */
  public long returnToken() {
    return returnToken;
  }

  /** Sets the token of the return under way (0: none). */
  public void returnToken(long token) {
    returnToken = token;
  }

  /** The source of the hand-off whose keys this slot holds here without owning it, or null. */
  public io.atoll.core.PodId importedFrom() {
    return importedFrom;
  }

  /** The epoch of the config that hand-off was planned on (0 when none). */
  public long importFloor() {
    return importFloor;
  }

  /** Records the hand-off whose keys this slot holds ({@code source} null: none). */
  public void imported(io.atoll.core.PodId source, long floor) {
    long f = source == null ? 0 : floor;
    if (java.util.Objects.equals(importedFrom, source) && importFloor == f) {
      return;
    }
    importedFrom = source;
    importFloor = f;
    journal.imported(id, source, f);
  }

  /** Managed mode: the node this slot's keys move to by this node's (or its primary's) mark, or null. */
  public io.atoll.core.PodId migratingTo() {
    return migratingTo;
  }

  /** Managed mode: the node this slot's keys arrive from by this node's (or its primary's) mark, or null. */
  public io.atoll.core.PodId importingFrom() {
    return importingFrom;
  }

  /** Records the slot's migration marks ({@code null}: none), logged when they change. */
  public void marks(io.atoll.core.PodId migrating, io.atoll.core.PodId importing) {
    if (java.util.Objects.equals(migratingTo, migrating) && java.util.Objects.equals(importingFrom, importing)) {
      return;
    }
    migratingTo = migrating;
    importingFrom = importing;
    journal.marked(id, migrating, importing);
  }

  /** The token of the hand-off attempt whose restores this slot accepts (0: none). */
  public long handOffToken() {
    return handOffToken;
  }

  /** Sets the token of the hand-off attempt whose restores this slot accepts (0: none). */
  public void handOffToken(long token) {
    handOffToken = token;
  }

  /** Holds {@code keys} out of service: their batch to {@code target} timed out. */
  public void hold(io.atoll.core.PodId target, java.util.Collection<Key> keys) {
    if (heldFor != null && !heldFor.equals(target)) {
      throw new IllegalStateException("slot " + id + " holds keys for " + heldFor + " (got: keys for " + target
          + "; expected: those resolved first)");
    }
    if (!keys.isEmpty()) {
      heldFor = target;
      held.addAll(keys);
    }
  }

  /**
   * The held keys are now held for {@code heir}, which took over the target they were sent to (it
   * holds whatever of their batch arrived there): the next attempt sends them to it again.
   */
  public void holdFor(io.atoll.core.PodId heir) {
    if (heldFor != null) {
      heldFor = heir;
    }
  }

  /** The target the held keys were sent to, or null if none are held. */
  public io.atoll.core.PodId heldFor() {
    return heldFor;
  }

  /** Whether {@code key} is held (its batch timed out). */
  public boolean isHeld(Key key) {
    return held.contains(key);
  }

  /** How many keys are held. */
  public int heldCount() {
    return held.size();
  }

  /** Up to {@code limit} held keys, in the order they were held. */
  public List<Key> heldKeys(int limit) {
    List<Key> keys = new ArrayList<>(Math.min(limit, held.size()));
    for (Key k : held) {
      if (keys.size() >= limit) {
        break;
      }
      keys.add(k);
    }
    return keys;
  }

  /** Puts a held key back in service (sent again and answered). */
  public void release(Key key) {
    held.remove(key);
    if (held.isEmpty()) {
      heldFor = null;
    }
  }

  /** Puts every held key back in service. */
  public void releaseHeld() {
    held.clear();
    heldFor = null;
  }

  private static long keyBytes(Key k) {
    // HashMap node 32, Key 24, byte[] header 16 + data, table slot ~8, Entry 24
    return 32 + 24 + 16 + Entry.align(k.bytes().length) + 8 + 24;
  }
}
