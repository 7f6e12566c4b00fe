package io.atoll.kv.internal.cluster;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.slots.KeySlots;
import io.atoll.core.slots.SlotState;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

/**
 * The one writer of a node's {@link ClusterView}. Every change (a CLUSTER command, a gossip merge,
 * a failure verdict) runs under this object's monitor and publishes a new immutable view; readers
 * take {@link #view()} without locking. Each published change of the config or the migration marks
 * is reported to the {@code onChange} callback (the config file), outside no lock of the caller's.
 *
 * <p>Epochs follow Redis and Garnet on atoll-core's per-claim epochs: a node's config epoch is its
 * {@link PodEntry} epoch; a slot claim this node makes carries at least its config epoch and more
 * than the claim it replaces; bumping the config epoch re-stamps this node's own claims, which is
 * what makes a local change win everywhere once it is gossiped.
 */
public final class ClusterState {

  /** A refused change: its Redis error text. */
  public static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message, null, false, false);
    }
  }

  private static final long FORGET_MILLIS = 60_000;

  private final LongSupplier clock;
  private final Consumer<ClusterView> beforeChange;
  private final Consumer<ClusterView> onChange;
  private volatile ClusterView view;
  private final Map<PodId, Long> forgotten = new HashMap<>();
  /** Managed mode: the shard manager's address (null: Redis-cluster mode, slots set by operators). */
  private volatile String managedBy;
  /** Managed mode: whether this node may serve keys now (it holds a live lease). */
  private volatile BooleanSupplier serving = () -> true;

  /** A state starting from {@code initial}; {@code onChange} hears about every later change. */
  public ClusterState(ClusterView initial, LongSupplier clock, Consumer<ClusterView> onChange) {
    this(initial, clock, v -> { }, onChange);
  }

  /**
   * As above; {@code beforeChange} hears each changed view before any reader can see it (managed
   * mode's {@link MarkRecords}: a mark is in the log and the stream before it routes a client).
   */
  public ClusterState(ClusterView initial, LongSupplier clock, Consumer<ClusterView> beforeChange,
      Consumer<ClusterView> onChange) {
    this.view = initial;
    this.clock = clock;
    this.beforeChange = beforeChange;
    this.onChange = onChange;
  }

  /** Runs {@code action} with the current view under this state's monitor: no change is published meanwhile. */
  public synchronized void withView(Consumer<ClusterView> action) {
    action.accept(view);
  }

  /** A fresh view: only this node, every slot unassigned. */
  public static ClusterView fresh(Pod me) {
    ClusterConfig config = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder()
        .pod(new PodEntry(me, PodStatus.ACTIVE, 0)).build();
    return new ClusterView(config, me.id(), Map.of(), Map.of(), Set.of());
  }

  /** The current view. */
  public ClusterView view() {
    return view;
  }

  private void publish(ClusterView next) {
    ClusterView before = view;
    boolean changed = before.config() != next.config() || !before.migrating().equals(next.migrating())
        || !before.importing().equals(next.importing()) || !before.me().equals(next.me());
    if (changed) {
      beforeChange.accept(next);
    }
    view = next;
    if (changed) {
      onChange.accept(next);
    }
  }

  private ClusterView with(ClusterConfig config) {
    ClusterView v = view;
    return new ClusterView(config, v.me(), v.migrating(), v.importing(), v.failed());
  }

  // ---- managed mode

  /**
   * Puts this node in managed mode: its slots are placed by the shard manager at {@code manager},
   * operator slot commands are refused, and it serves keys only while {@code serving} says so (its
   * lease is live).
   */
  public void managed(String manager, BooleanSupplier serving) {
    this.serving = java.util.Objects.requireNonNull(serving, "serving");
    this.managedBy = java.util.Objects.requireNonNull(manager, "manager");
  }

  /** The shard manager placing this node's slots, or null in Redis-cluster mode. */
  public String managedBy() {
    return managedBy;
  }

  /** Whether this node may serve keys now (always, unless managed and its lease lapsed). */
  public boolean serving() {
    return serving.getAsBoolean();
  }

  /**
   * Managed mode: takes the manager's config (already in this node's terms, see
   * {@code ManagedConfigs}) unless an equal or newer one is installed; the migration marks follow
   * it ({@link ManagedMarks#adopt}).
   */
  public synchronized boolean adopt(ClusterConfig config) {
    return adopt(config, MarkRecords.Mirror.NONE);
  }

  /**
   * As {@link #adopt(ClusterConfig)}; a node that replicated and is promoted by {@code config}
   * (it replicates no more, and a dead primary's tombstone names it as heir) first takes the marks its primary's stream left in its
   * slots ({@code mirrored}), in the same published view: a promoted replica never serves its new
   * slots without the hand-offs they are part of. Every key of a slot it finds moving to another
   * node is held for that node first ({@link MarkRecords.Mirror#hold}): its primary may have sent
   * a batch there whose deletions never reached the stream, so a copy may be on both sides.
   */
  public synchronized boolean adopt(ClusterConfig config, MarkRecords.Mirror mirrored) {
    ClusterView v = view;
    if (config.epoch() < v.config().epoch() || config.equals(v.config())) {
      return false;
    }
    if (config.pod(v.me()).isEmpty()) {
      return false; // not registered yet in that config
    }
    if (MarkRecords.replicating(v.config(), v.me()) && !MarkRecords.replicating(config, v.me())
        && MarkRecords.heir(config, v.me())) {
      Map<Integer, PodId> mig = new HashMap<>();
      Map<Integer, PodId> imp = new HashMap<>();
      for (int s = 0; s < KeySlots.SLOT_COUNT; s++) {
        MarkRecords.SlotMarks m = mirrored.marks(s);
        if (m != null && m.migrating() != null && !m.migrating().equals(v.me())) {
          mig.put(s, m.migrating());
        }
        if (m != null && m.importing() != null && !m.importing().equals(v.me())) {
          imp.put(s, m.importing());
        }
      }
      v = new ClusterView(v.config(), v.me(), mig, imp, v.failed());
      ClusterView next = ManagedMarks.adopt(v, config);
      // In a return's slots too: its primary may still have held keys of an earlier batch to
      // that node (a return keeps this node's copies of held keys, and releases them at its end).
      next.migrating().forEach(mirrored::hold);
      publish(next);
      return true;
    }
    publish(ManagedMarks.adopt(v, config));
    return true;
  }

  /**
   * Managed mode: marks {@code slots} as moving to {@code target}; a return of them under way ends
   * (the move goes forward again).
   */
  public synchronized void markMigrating(int[] slots, PodId target) {
    publish(ManagedMarks.migrating(view, slots, target));
  }

  /**
   * Managed mode: pairs the marks of {@code slots} with {@code peer} for a <em>return</em>, the
   * reverse of a hand-off that stopped part way ({@link ManagedMarks#returning}).
   *
   * @return the slots now returning
   */
  public synchronized int[] markReturning(int[] slots, PodId peer) {
    ManagedMarks.Returning r = ManagedMarks.returning(view, slots, peer);
    publish(r.view());
    return r.slots();
  }

  /** Managed mode: ends the return of {@code slot} with {@code peer}: no key of it is left on the target. */
  public synchronized void endReturn(int slot, PodId peer) {
    publish(ManagedMarks.endReturn(view, slot, peer));
  }

  /**
   * Managed mode: marks {@code slots} as arriving from {@code source} (named, not looked up: the
   * manager may start a hand-off to a node that has not seen the source's entry yet).
   */
  public synchronized void markImporting(int[] slots, PodId source) {
    publish(ManagedMarks.importing(view, slots, source));
  }

  // ---- gossip

  /**
   * Merges a config heard from a peer (Garnet's merge-if-newer); forgotten nodes stay out.
   *
   * @throws IllegalArgumentException if {@code incoming} is not laid out as this node's slots (the
   *     bus then closes the sender's connection; nothing here changes)
   */
  public synchronized void merge(ClusterConfig incoming) {
    ClusterView v = view;
    if (!incoming.spaces().equals(v.config().spaces())) {
      // The config type merges a layout grown by appended spaces (entity shard spaces grow that
      // way), but a KV cluster's slots are one space of 16384 for good: a peer's config laid out
      // otherwise is malformed, and adopting it would leave positions no client can ever reach.
      throw new IllegalArgumentException("cluster config: spaces " + incoming.spaces()
          + " (expected: " + v.config().spaces() + ", the " + v.config().size() + " slots of a KV cluster)");
    }
    ClusterConfig merged = v.config().merge(incoming);
    if (merged == v.config()) {
      return;
    }
    long now = clock.getAsLong();
    forgotten.values().removeIf(until -> until < now);
    if (!forgotten.isEmpty()) {
      merged = ConfigEdits.without(merged, forgotten.keySet());
    }
    ClusterView next = with(merged);
    PodId follow = Replicas.newPrimary(v, next);
    if (follow != null) {
      next = with(Replicas.follow(next.config(), v.me(), next.nodeId(follow)));
      next = new ClusterView(next.config(), v.me(), Map.of(), Map.of(), next.failed());
    }
    publish(next);
  }

  // ---- replicas

  /**
   * CLUSTER REPLICATE: this node becomes a replica of {@code nodeId}. Refused, with Redis' texts,
   * for an unknown node, this node, a replica, or while this node is a primary with slots or keys
   * ({@code holdsKeys}). The change is stamped with a new config epoch so that it wins every merge.
   */
  public synchronized void replicate(String nodeId, boolean holdsKeys) {
    ClusterView v = view;
    PodEntry target = v.byNodeId(nodeId);
    if (target == null) {
      throw new Refused("ERR Unknown node " + nodeId);
    }
    if (target.id().equals(v.me())) {
      throw new Refused("ERR Can't replicate myself");
    }
    if (v.primaryOf(target.id()) != null) {
      throw new Refused("ERR I can only replicate a master, not a replica.");
    }
    if (v.myPrimary() == null && (v.config().ownedCounts().getOrDefault(v.me(), 0) > 0 || holdsKeys)) {
      throw new Refused("ERR To set a master the node must be empty and without assigned slots.");
    }
    if (target.id().equals(v.myPrimary())) {
      return;
    }
    ClusterConfig c = Replicas.follow(v.config(), v.me(), nodeId);
    publish(new ClusterView(c, v.me(), Map.of(), Map.of(), v.failed()));
  }

  /**
   * A replica takes over its primary's slots (CLUSTER FAILOVER's last step): it becomes a primary
   * with a new config epoch, greater than any, and claims at it every slot its primary owns, so
   * the change wins every merge; the old primary, hearing it, becomes its replica.
   *
   * @param minEpoch an epoch the new one must exceed too (the primary's current epoch, which this
   *     node may not have heard of yet; 0: none)
   * @return false if this node is not a replica (any more)
   */
  public synchronized boolean takeOver(long minEpoch) {
    ClusterView v = view;
    PodId primary = v.myPrimary();
    if (primary == null) {
      return false;
    }
    publish(new ClusterView(Replicas.takeOver(v.config(), v.me(), primary, minEpoch), v.me(), Map.of(), Map.of(),
        v.failed()));
    return true;
  }

  /** Replaces the set of failed nodes. */
  public synchronized void failed(Set<PodId> failed) {
    ClusterView v = view;
    if (!v.failed().equals(failed)) {
      publish(new ClusterView(v.config(), v.me(), v.migrating(), v.importing(), failed));
    }
  }

  /**
   * Redis' epoch-collision rule: if {@code other} has this node's config epoch and the greater
   * node id, this node takes a new epoch.
   */
  public synchronized void onPeerEpoch(PodId other, long otherEpoch) {
    ClusterView v = view;
    long mine = v.myEpoch();
    if (mine == 0 || otherEpoch != mine || other.equals(v.me())) {
      return;
    }
    if (v.nodeId(other).compareTo(v.myNodeId()) > 0) {
      publish(with(ConfigEdits.restamp(v.config(), v.me(), v.config().epoch() + 1)));
    }
  }

  // ---- CLUSTER commands

  /** ADDSLOTS: claims unassigned slots for this node. */
  public synchronized void addSlots(int[] slots) {
    ClusterView v = view;
    ConfigEdits.checkUnique(slots);
    for (int s : slots) {
      if (v.config().owner(s) != null) {
        throw new Refused("ERR Slot " + s + " is already busy");
      }
    }
    ClusterConfig.Builder b = v.config().toBuilder();
    long mine = v.myEpoch();
    for (int s : slots) {
      b.claim(s, Claim.stable(v.me(), Math.max(mine, v.config().epoch(s) + 1)));
    }
    publish(with(b.build()));
  }

  /** DELSLOTS: unassigns slots (at a newer epoch, so the change spreads). */
  public synchronized void delSlots(int[] slots) {
    ClusterView v = view;
    ConfigEdits.checkUnique(slots);
    for (int s : slots) {
      if (v.config().owner(s) == null) {
        throw new Refused("ERR Slot " + s + " is already unassigned");
      }
    }
    ClusterConfig.Builder b = v.config().toBuilder();
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    for (int s : slots) {
      b.claim(s, Claim.offline(v.config().epoch(s) + 1));
      mig.remove(s);
      imp.remove(s);
    }
    publish(new ClusterView(b.build(), v.me(), mig, imp, v.failed()));
  }

  /** SETSLOT slot MIGRATING|IMPORTING node. */
  public synchronized void setSlotMigration(int slot, SlotState state, String nodeId) {
    ClusterView v = view;
    PodEntry peer = v.byNodeId(nodeId);
    boolean mine = v.me().equals(v.config().owner(slot));
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    if (state == SlotState.MIGRATING) {
      if (!mine) {
        throw new Refused("ERR I'm not the owner of hash slot " + slot);
      }
      if (peer == null) {
        throw new Refused("ERR I don't know about node " + nodeId);
      }
      mig.put(slot, peer.id());
    } else {
      if (mine) {
        throw new Refused("ERR I'm already the owner of hash slot " + slot);
      }
      if (peer == null) {
        throw new Refused("ERR I don't know about node " + nodeId);
      }
      imp.put(slot, peer.id());
    }
    publish(new ClusterView(v.config(), v.me(), mig, imp, v.failed()));
  }

  /** SETSLOT slot STABLE. */
  public synchronized void setSlotStable(int slot) {
    ClusterView v = view;
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    mig.remove(slot);
    imp.remove(slot);
    publish(new ClusterView(v.config(), v.me(), mig, imp, v.failed()));
  }

  /**
   * SETSLOT slot NODE node. Taking a slot this node imported bumps its config epoch, so the new
   * ownership wins every merge (Redis' bump without consensus). {@code holdsKeys} says whether
   * this node still has keys in a slot.
   */
  public synchronized void setSlotNode(int slot, String nodeId, IntPredicate holdsKeys) {
    ClusterView v = view;
    PodEntry target = v.byNodeId(nodeId);
    if (target == null) {
      throw new Refused("ERR Unknown node " + nodeId);
    }
    boolean mine = v.me().equals(v.config().owner(slot));
    if (mine && !target.id().equals(v.me()) && holdsKeys.test(slot)) {
      throw new Refused("ERR Can't assign hashslot " + slot
          + " to a different node while I still hold keys for this hash slot.");
    }
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    if (!target.id().equals(v.me())) {
      mig.remove(slot);
    }
    ClusterConfig config = v.config();
    if (target.id().equals(v.me()) && imp.remove(slot) != null) {
      long max = config.epoch();
      if (v.myEpoch() == 0 || v.myEpoch() != max || ConfigEdits.epochShared(config, v.me(), v.myEpoch())) {
        config = ConfigEdits.restamp(config, v.me(), max + 1);
      }
    }
    long epoch = Math.max(target.id().equals(v.me()) ? ConfigEdits.myEpoch(config, v.me()) : 0, config.epoch(slot) + 1);
    if (!target.id().equals(config.owner(slot))) {
      config = config.toBuilder().claim(slot, Claim.stable(target.id(), epoch)).build();
    }
    publish(new ClusterView(config, v.me(), mig, imp, v.failed()));
  }

  /** BUMPEPOCH: returns "BUMPED n" or "STILL n" as Redis does. */
  public synchronized String bumpEpoch() {
    ClusterView v = view;
    long max = v.config().epoch();
    if (v.myEpoch() == 0 || v.myEpoch() != max) {
      ClusterConfig c = ConfigEdits.restamp(v.config(), v.me(), max + 1);
      publish(with(c));
      return "BUMPED " + (max + 1);
    }
    return "STILL " + v.myEpoch();
  }

  /** SET-CONFIG-EPOCH. */
  public synchronized void setConfigEpoch(long epoch) {
    ClusterView v = view;
    if (epoch < 0) {
      throw new Refused("ERR Invalid config epoch specified: " + epoch);
    }
    if (v.knownNodes() > 1) {
      throw new Refused("ERR The user can assign a config epoch only when the node does not know any other node.");
    }
    if (v.myEpoch() != 0) {
      throw new Refused("ERR Node config epoch is already non-zero");
    }
    publish(with(ConfigEdits.restamp(v.config(), v.me(), epoch)));
  }

  /** FORGET: drops a node from this node's view for a minute (it is kept out of merges). */
  public synchronized void forget(String nodeId) {
    ClusterView v = view;
    PodEntry e = v.byNodeId(nodeId);
    if (e == null) {
      throw new Refused("ERR Unknown node " + nodeId);
    }
    if (e.id().equals(v.me())) {
      throw new Refused("ERR I tried hard but I can't forget myself...");
    }
    forgotten.put(e.id(), clock.getAsLong() + FORGET_MILLIS);
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    mig.values().removeIf(e.id()::equals);
    imp.values().removeIf(e.id()::equals);
    Set<PodId> failed = new HashSet<>(v.failed());
    failed.remove(e.id());
    publish(new ClusterView(ConfigEdits.without(v.config(), Set.of(e.id())), v.me(), mig, imp, failed));
  }

  /** RESET: forgets every other node and every slot; HARD also takes a new identity. */
  public synchronized void reset(Pod newMe, boolean hard) {
    ClusterView v = view;
    ClusterConfig config = ClusterConfig.empty(KeySlots.SLOT_COUNT);
    // A replica's soft reset takes a new epoch: its entry without the replica mark must win over
    // the one its peers hold (an equal epoch is settled by the entry's text, which would not).
    long epoch = hard ? 0 : v.myPrimary() != null ? v.config().epoch() + 1 : v.myEpoch();
    // A replica reset is a primary again, without slots (as Redis' CLUSTER RESET).
    config = config.toBuilder().pod(new PodEntry(Nodes.withPrimary(newMe, null), PodStatus.ACTIVE, epoch)).build();
    forgotten.clear();
    publish(new ClusterView(config, newMe.id(), Map.of(), Map.of(), Set.of()));
  }
}
