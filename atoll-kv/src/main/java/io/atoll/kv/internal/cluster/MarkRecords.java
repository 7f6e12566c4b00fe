package io.atoll.kv.internal.cluster;

import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Managed mode: keeps each slot's logged migration marks ({@link Slot#marks}) in step with the
 * marks of the node's view, so that its log and replication stream carry them. A replica thus
 * holds its primary's marks, in the stream's order: a MIGRATING mark before the first deletion of
 * the hand-off it belongs to. When the replica is promoted ({@link ClusterState#adopt(
 * io.atoll.core.ClusterConfig, Mirror)}) it routes by them as its primary did: {@code -ASK} to the
 * target for the keys already moved, so they are found, and the target, which names the dead
 * primary's heir in its record, keeps them.
 *
 * <p>Called with each view about to be published, under the {@link ClusterState}'s monitor (so
 * one at a time, in order, and before any client is routed by it); it takes each changed slot's
 * lock, which is the allowed order (the state's lock is never taken inside a slot's). A node that
 * replicates writes nothing: its slots' marks are its primary's, from the stream.
 */
public final class MarkRecords {
  private final SlotStore store;
  private Map<Integer, PodId> migrating = Map.of();
  private Map<Integer, PodId> importing = Map.of();
  private boolean scanned;

  /** Marks recorded in {@code store}'s slots. */
  public MarkRecords(SlotStore store) {
    this.store = store;
  }

  /** The marks of slot {@code s} as logged (its primary's, on a replica), read under its lock. */
  public static SlotMarks read(SlotStore store, int s) {
    Slot slot = store.slot(s);
    synchronized (slot) {
      return new SlotMarks(slot.migratingTo(), slot.importingFrom());
    }
  }

  /** A slot's logged marks (null: none). */
  public record SlotMarks(PodId migrating, PodId importing) {}

  /** What a promoted replica takes from its slots ({@link ClusterState#adopt(io.atoll.core.ClusterConfig, Mirror)}). */
  public interface Mirror {
    /** No marks, nothing held. */
    Mirror NONE = new Mirror() {
      @Override
      public SlotMarks marks(int slot) {
        return null;
      }

      @Override
      public void hold(int slot, PodId target) {
      }
    };

    /** The marks the primary's stream left in {@code slot} (null: none). */
    SlotMarks marks(int slot);

    /** Holds every key of {@code slot} for {@code target} (see {@code Slot#hold}). */
    void hold(int slot, PodId target);
  }

  /** The mirror of {@code store}'s slots, keys held at {@code clock}'s time. */
  public static Mirror mirror(SlotStore store, java.util.function.LongSupplier clock) {
    return new Mirror() {
      @Override
      public SlotMarks marks(int slot) {
        return read(store, slot);
      }

      @Override
      public void hold(int slot, PodId target) {
        Slot s = store.slot(slot);
        synchronized (s) {
          if (s.heldFor() != null && !s.heldFor().equals(target)) {
            return; // not on a replica just promoted: held in memory only, by this node's own hand-off
          }
          java.util.List<io.atoll.kv.internal.store.Key> keys = new java.util.ArrayList<>();
          for (byte[] k : s.keys(clock.getAsLong(), Integer.MAX_VALUE)) {
            keys.add(new io.atoll.kv.internal.store.Key(k));
          }
          s.hold(target, keys);
        }
      }
    };
  }

  /** Whether {@code me}'s entry in {@code config} names a primary it replicates. */
  static boolean replicating(io.atoll.core.ClusterConfig config, PodId me) {
    return config.pod(me).map(PodEntry::pod).map(Nodes::primaryOf).isPresent();
  }

  /**
   * Whether {@code config} names {@code me} the heir of a primary declared dead (its tombstone,
   * {@link Nodes#heirOf}): a replica promoted, with or without slots.
   */
  public static boolean heir(io.atoll.core.ClusterConfig config, PodId me) {
    String id = Nodes.nodeId(me);
    for (PodEntry e : config.pods()) {
      if (e.status() != io.atoll.core.PodStatus.ACTIVE && id.equals(Nodes.heirOf(e.pod()))) {
        return true;
      }
    }
    return false;
  }

  /** Records the marks of {@code v} in the slots whose marks changed. */
  public void viewChanged(ClusterView v) {
    if (replicating(v.config(), v.me())) {
      // Its slots' marks are its primary's; promoted later, it looks at every slot again.
      scanned = false;
      migrating = Map.of();
      importing = Map.of();
      return;
    }
    Set<Integer> changed = new HashSet<>();
    if (!scanned) {
      // The first view since the start: the log may hold marks the saved view lost (or the
      // reverse); every slot is looked at once.
      scanned = true;
      for (int s = 0; s < KeySlots.SLOT_COUNT; s++) {
        changed.add(s);
      }
    } else {
      changed.addAll(migrating.keySet());
      changed.addAll(importing.keySet());
      changed.addAll(v.migrating().keySet());
      changed.addAll(v.importing().keySet());
      changed.removeIf(s -> java.util.Objects.equals(migrating.get(s), v.migrating().get(s))
          && java.util.Objects.equals(importing.get(s), v.importing().get(s)));
    }
    for (int s : changed) {
      Slot slot = store.slot(s);
      synchronized (slot) {
        PodId mig = v.migrating().get(s);
        slot.marks(mig, v.importing().get(s)); // logged only if they differ
        PodId held = slot.heldFor();
        if (held != null && mig != null && !mig.equals(held) && mig.equals(v.heir(held))) {
          slot.holdFor(mig); // the target died; its heir holds what of the held batch arrived
        }
      }
    }
    migrating = v.migrating();
    importing = v.importing();
  }
}
