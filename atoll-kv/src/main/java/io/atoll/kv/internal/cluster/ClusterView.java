package io.atoll.kv.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.slots.KeySlots;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * One immutable snapshot of what a node knows: the shared config (gossiped), its own migration
 * marks (local, never gossiped — like Redis' {@code migrating_slots_to}/{@code importing_slots_from},
 * Garnet's transient states), and which nodes it believes failed. Readers on the command path hold
 * one reference and never lock.
 */
public final class ClusterView {
  private final ClusterConfig config;
  private final PodId me;
  private final Map<Integer, PodId> migrating;
  private final Map<Integer, PodId> importing;
  private final Set<PodId> failed;
  private final Map<String, PodEntry> byNodeId = new HashMap<>();
  private final Map<PodId, String> nodeIds = new HashMap<>();
  private final Map<PodId, PodId> primaries = new HashMap<>();
  private final boolean ok;
  private final int assigned;

  /** A view; the maps and set are copied. */
  public ClusterView(ClusterConfig config, PodId me, Map<Integer, PodId> migrating, Map<Integer, PodId> importing,
      Set<PodId> failed) {
    this.config = config;
    this.me = me;
    this.migrating = Map.copyOf(migrating);
    this.importing = Map.copyOf(importing);
    this.failed = Set.copyOf(failed);
    for (PodEntry e : config.pods()) {
      if (e.status() == PodStatus.ACTIVE) {
        String id = Nodes.nodeId(e.id());
        byNodeId.put(id, e);
        nodeIds.put(e.id(), id);
      }
    }
    for (PodEntry e : config.pods()) {
      String of = e.status() == PodStatus.ACTIVE ? Nodes.primaryOf(e.pod()) : null;
      PodEntry p = of == null ? null : byNodeId.get(of);
      if (p != null && !p.id().equals(e.id())) {
        primaries.put(e.id(), p.id());
      }
    }
    int unowned = config.unownedCount();
    assigned = KeySlots.SLOT_COUNT - unowned;
    boolean down = unowned > 0;
    if (!down && !this.failed.isEmpty()) {
      Map<PodId, Integer> counts = config.ownedCounts();
      for (PodId f : this.failed) {
        down |= counts.getOrDefault(f, 0) > 0;
      }
    }
    ok = !down;
  }

  /** The shared config. */
  public ClusterConfig config() {
    return config;
  }

  /** This node. */
  public PodId me() {
    return me;
  }

  /** This node's Redis id. */
  public String myNodeId() {
    return nodeIds.get(me);
  }

  /** This node's config epoch. */
  public long myEpoch() {
    return config.pod(me).map(PodEntry::epoch).orElse(0L);
  }

  /** Slots this node is moving away, to their targets. */
  public Map<Integer, PodId> migrating() {
    return migrating;
  }

  /** Slots this node is receiving, from their sources. */
  public Map<Integer, PodId> importing() {
    return importing;
  }

  /** Nodes this node counts as failed (FAIL). */
  public Set<PodId> failed() {
    return failed;
  }

  /** The active node with this Redis id, or null. */
  public PodEntry byNodeId(String nodeId) {
    return byNodeId.get(nodeId);
  }

  /** The Redis id of a listed node (computed for unlisted ones). */
  public String nodeId(PodId id) {
    String s = nodeIds.get(id);
    return s != null ? s : Nodes.nodeId(id);
  }

  /**
   * The primary the node {@code id} replicates, or null if it is a primary (or names a node this
   * view does not list: it counts as a primary without slots until that node is heard of).
   */
  public PodId primaryOf(PodId id) {
    return primaries.get(id);
  }

  /**
   * Managed mode: the active node that went on with the slots, migration marks and import records
   * of {@code node} once it was declared dead (its replica, promoted; see {@link Nodes#heirOf}),
   * or null if {@code node} is active, unknown, or was taken over by no active node.
   */
  public PodId heir(PodId node) {
    PodEntry e = config.pod(node).orElse(null);
    if (e == null || e.status() == PodStatus.ACTIVE) {
      return null;
    }
    String id = Nodes.heirOf(e.pod());
    PodEntry h = id == null ? null : byNodeId.get(id);
    return h == null || h.id().equals(node) ? null : h.id();
  }

  /**
   * Whether {@code node} is {@code named}, or the active node that went on with it ({@link
   * #heir}): the peer a hand-off, a return or held keys recorded, as it stands now. False if
   * {@code named} is null.
   */
  public boolean standsFor(PodId node, PodId named) {
    return named != null && (node.equals(named) || node.equals(heir(named)));
  }

  /** The primary this node replicates, or null. */
  public PodId myPrimary() {
    return primaries.get(me);
  }

  /** The replicas of {@code primary}, in the config's order. */
  public java.util.List<PodId> replicasOf(PodId primary) {
    java.util.List<PodId> r = new java.util.ArrayList<>();
    for (PodEntry e : config.pods()) {
      if (primary.equals(primaries.get(e.id()))) {
        r.add(e.id());
      }
    }
    return r;
  }

  /** The active nodes, this one included. */
  public int knownNodes() {
    return byNodeId.size();
  }

  /** Whether every slot has an owner and no owner has failed (Redis' cluster_state:ok). */
  public boolean ok() {
    return ok;
  }

  /** How many slots have an owner. */
  public int assignedSlots() {
    return assigned;
  }
}
