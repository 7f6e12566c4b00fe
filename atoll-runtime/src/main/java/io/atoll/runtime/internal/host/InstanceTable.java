package io.atoll.runtime.internal.host;

import io.atoll.runtime.internal.util.GuardedBy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The entities of one type in one shard, by id: an open-addressing hash table (linear probing)
 * whose slots hold the instances themselves, keyed by {@link EntityInstance#id}.
 *
 * <p><b>Why not a {@code ConcurrentHashMap}.</b> Its node per entry (32 bytes with compressed
 * pointers) was a sixth of the heap an idle entity cost a pod, and an idle entity is what most of
 * a pod's entities are. Here an entry is one reference in the slot array (at most three quarters
 * full), and the key is the instance's own id.
 *
 * <p><b>Concurrency.</b> Writes ({@link #putIfAbsent}, {@link #replace}, {@link #remove}) hold
 * this table's monitor and publish slots with release stores; a growth builds a new array and
 * publishes it whole. {@link #get} takes no lock: it returns an instance that was mapped to the
 * id at some moment of the call, or null, and it may return null for an id whose entry a
 * concurrent removal or growth is moving. So a null from {@code get} is a hint: the one caller
 * that acts on it creates an instance and settles the race with {@code putIfAbsent}, which
 * answers under the monitor and returns the instance already there. No entity can thus get two
 * instances in one table. Thread-safe.
 */
final class InstanceTable {

  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(EntityInstance[].class);
  private static final int INITIAL_CAPACITY = 8;

  /** Power-of-two length; always at least a quarter empty, so every probe meets a null. */
  private volatile EntityInstance[] slots = new EntityInstance[INITIAL_CAPACITY];
  @GuardedBy("this")
  private int size;

  /** The instance mapped to {@code id}, or null (which may be stale: see the class comment). */
  EntityInstance get(String id) {
    EntityInstance[] t = slots;
    int mask = t.length - 1;
    int i = home(id, mask);
    for (int probes = 0; probes <= mask; probes++) {
      EntityInstance e = (EntityInstance) SLOT.getAcquire(t, i);
      if (e == null) {
        return null;
      }
      if (e.id.equals(id)) {
        return e;
      }
      i = (i + 1) & mask;
    }
    return null; // entries moved under a long probe; the caller settles it under the monitor
  }

  /** Maps {@code fresh} under its id unless an instance is mapped there: returns that one, or null. */
  synchronized EntityInstance putIfAbsent(EntityInstance fresh) {
    EntityInstance[] t = slots;
    int mask = t.length - 1;
    int i = home(fresh.id, mask);
    for (EntityInstance e; (e = t[i]) != null; i = (i + 1) & mask) {
      if (e.id.equals(fresh.id)) {
        return e;
      }
    }
    if ((size + 1) * 4L > t.length * 3L) {
      grow(t);
      t = slots;
      mask = t.length - 1;
      i = home(fresh.id, mask);
      while (t[i] != null) {
        i = (i + 1) & mask;
      }
    }
    SLOT.setRelease(t, i, fresh);
    size++;
    return null;
  }

  /** Maps the id of {@code old} to {@code successor} if it still maps to {@code old}. */
  synchronized boolean replace(EntityInstance old, EntityInstance successor) {
    if (!old.id.equals(successor.id)) {
      throw new IllegalArgumentException("successor " + successor + " (expected an instance of " + old + ")");
    }
    EntityInstance[] t = slots;
    int i = slotOf(t, old);
    if (i < 0) {
      return false;
    }
    SLOT.setRelease(t, i, successor);
    return true;
  }

  /** Removes the entry of {@code inst}'s id if it maps to {@code inst}; false if it did not. */
  synchronized boolean remove(EntityInstance inst) {
    EntityInstance[] t = slots;
    int hole = slotOf(t, inst);
    if (hole < 0) {
      return false;
    }
    // Knuth's algorithm R: close the hole by moving back every later entry of the cluster whose
    // home is not between the hole and it, so that no probe for those ends early at the hole.
    int mask = t.length - 1;
    for (int j = (hole + 1) & mask; t[j] != null; j = (j + 1) & mask) {
      int home = home(t[j].id, mask);
      boolean between = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (!between) {
        SLOT.setRelease(t, hole, t[j]);
        hole = j;
      }
    }
    SLOT.setRelease(t, hole, null);
    size--;
    return true;
  }

  /** The instances mapped now, a copy. */
  synchronized List<EntityInstance> values() {
    List<EntityInstance> all = new ArrayList<>(size);
    for (EntityInstance e : slots) {
      if (e != null) {
        all.add(e);
      }
    }
    return all;
  }

  /** How many instances are mapped. */
  synchronized int size() {
    return size;
  }

  /** The slot holding exactly {@code inst}, or -1. Call holding the monitor. */
  private static int slotOf(EntityInstance[] t, EntityInstance inst) {
    int mask = t.length - 1;
    for (int i = home(inst.id, mask); t[i] != null; i = (i + 1) & mask) {
      if (t[i].id.equals(inst.id)) {
        return t[i] == inst ? i : -1;
      }
    }
    return -1;
  }

  /** Copies the entries into an array twice as long and publishes it. Call holding the monitor. */
  private void grow(EntityInstance[] t) {
    EntityInstance[] n = new EntityInstance[t.length * 2];
    int mask = n.length - 1;
    for (EntityInstance e : t) {
      if (e != null) {
        int i = home(e.id, mask);
        while (n[i] != null) {
          i = (i + 1) & mask;
        }
        n[i] = e;
      }
    }
    slots = n; // readers of the old array still find every entry it held; it is never written again
  }

  private static int home(String id, int mask) {
    int h = id.hashCode() * 0x9E3779B9; // spreads ids that differ in a few characters over the table
    return (h ^ (h >>> 16)) & mask;
  }
}
