package io.atoll.kv.internal.managed;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.cluster.Nodes;

/**
 * Between the manager's config and a KV node's. The manager knows a node by its control address
 * (gRPC, the client port + {@link #CONTROL_OFFSET}, where Redis has its bus); clients and the
 * node's own view know it by its client address. A node's view is the manager's config with every
 * pod renamed to its client address (same incarnation, status and epochs, same claims at the same
 * positions: shard {@code s + 1} is slot {@code s}), so the node's redirects, CLUSTER SLOTS,
 * SHARDS and NODES name client addresses, and every node derives the same Redis ids. A node's TLS
 * client port, which it registers with the manager ({@link io.atoll.core.Pod#tlsPort()}), goes
 * into its node's version text as Redis-cluster mode's gossip carries it ({@link Nodes}). Pure.
 */
public final class ManagedConfigs {

  /** The control (gRPC) port is the client port plus this, as Redis' bus port. */
  public static final int CONTROL_OFFSET = 10000;

  private ManagedConfigs() {}

  /** The manager's name of a node known to clients as {@code kv}. */
  public static PodId toManager(PodId kv) {
    return new PodId(new PodAddress(kv.address().host(), kv.address().port() + CONTROL_OFFSET), kv.incarnation());
  }

  /** The client-side name of a node the manager knows as {@code managed}. */
  public static PodId toKv(PodId managed) {
    return new PodId(new PodAddress(managed.address().host(), clientPort(managed)), managed.incarnation());
  }

  private static int clientPort(PodId managed) {
    int p = managed.address().port() - CONTROL_OFFSET;
    if (p < 1) {
      throw new IllegalArgumentException("pod " + managed + " is not a KV node (expected: a control port above "
          + CONTROL_OFFSET + ")");
    }
    return p;
  }

  /** The KV node of {@code incarnation} in {@code managed} (an active one first), or null. */
  private static PodId primaryOf(ClusterConfig managed, long incarnation) {
    PodId found = null;
    for (PodEntry e : managed.pods()) {
      if (e.id().incarnation() == incarnation) {
        if (e.status() == io.atoll.core.PodStatus.ACTIVE) {
          return e.id();
        }
        found = e.id();
      }
    }
    return found;
  }

  /** Heirs followed at most this far (each a promotion after its predecessor's death). */
  private static final int HEIRS = 64;

  /**
   * The active node that went on with the dead primary {@code dead}: its heir ({@link
   * io.atoll.core.PodVersion#kvHeir}), or that heir's heir if it died too and was taken over in
   * turn; null if the line ends in a node that is not active.
   */
  private static PodId heirOf(ClusterConfig managed, PodEntry dead) {
    PodEntry at = dead;
    for (int i = 0; i < HEIRS; i++) {
      java.util.OptionalLong next = at.pod().version().kvHeir();
      if (next.isEmpty()) {
        return null;
      }
      PodId id = primaryOf(managed, next.getAsLong());
      PodEntry e = id == null ? null : managed.pod(id).orElse(null);
      if (e == null) {
        return null;
      }
      if (e.status() == io.atoll.core.PodStatus.ACTIVE) {
        return e.id();
      }
      at = e;
    }
    return null;
  }

  /**
   * The manager's config in a node's terms: a replica the manager made ({@link
   * io.atoll.core.PodVersion#kvReplicaOf}) names its primary's Redis id, as in Redis-cluster mode;
   * a dead primary taken over names the active node that went on with it ({@link Nodes#heirOf}).
   *
   * @throws IllegalArgumentException if it does not have 16384 positions, or names a pod that is
   *     not a KV node
   */
  public static ClusterConfig toKv(ClusterConfig managed) {
    if (managed.size() != KeySlots.SLOT_COUNT) {
      throw new IllegalArgumentException("the shard manager has " + managed.size() + " shards (expected: "
          + KeySlots.SLOT_COUNT + ", one per slot; start it with --shards " + KeySlots.SLOT_COUNT + ")");
    }
    ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT, managed.clusterId()).toBuilder();
    for (PodEntry e : managed.pods()) {
      PodId id = toKv(e.id());
      io.atoll.core.Pod pod = Nodes.pod(id.address().host(), id.address().port(), id.incarnation(),
          e.id().address().port(), e.pod().tlsPort());
      java.util.OptionalLong of = e.pod().version().kvPrimary();
      if (of.isPresent()) {
        PodId primary = primaryOf(managed, of.getAsLong());
        if (primary != null) {
          pod = Nodes.withPrimary(pod, Nodes.nodeId(toKv(primary)));
        }
      }
      if (e.status() != io.atoll.core.PodStatus.ACTIVE) {
        PodId heir = heirOf(managed, e);
        if (heir != null) {
          pod = Nodes.withHeir(pod, Nodes.nodeId(toKv(heir)));
        }
      }
      b.pod(new PodEntry(pod, e.status(), e.epoch()));
    }
    for (int s = 0; s < managed.size(); s++) {
      Claim c = managed.claim(s);
      if (c.owner() == null && c.peer() == null && c.epoch() == 0) {
        continue;
      }
      b.claim(s, new Claim(c.owner() == null ? null : toKv(c.owner()), c.state(),
          c.peer() == null ? null : toKv(c.peer()), c.epoch()));
    }
    return b.build();
  }
}
