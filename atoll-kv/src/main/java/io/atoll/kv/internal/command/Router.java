package io.atoll.kv.internal.command;

import io.atoll.core.PodId;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.Nodes;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;

/**
 * Redis Cluster's redirection rule for keyed commands, on a {@link ClusterView}: a node serves a
 * key in a slot it owns; in a slot it is MIGRATING only while the keys are still here; in a slot it
 * is IMPORTING only after ASKING. Pure apart from reading the locked slot.
 */
final class Router {
  static final String CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot";
  static final String TRYAGAIN = "TRYAGAIN Multiple keys request during rehashing of slot";
  static final String UNBOUND = "CLUSTERDOWN Hash slot not served";
  static final String DOWN = "CLUSTERDOWN The cluster is down";
  /** Managed mode, lease lapsed: the node fenced itself (the manager may give its slots away). */
  static final String FENCED = "CLUSTERDOWN this node lost its lease with the shard manager and serves no keys"
      + " until it renews it";

  private Router() {}

  /**
   * What a node whose lease lapsed answers for slot {@code s}: {@link #FENCED}, or, when it owns
   * the slot and the manager gave it a replica, -MOVED to that replica. The manager gives a node's
   * slots to its replica once its lease and the margin ran out, and a node cut off from the manager
   * cannot hear it; clients whose view still names this node follow the redirect there. A replica
   * not promoted (yet) sends them back with -MOVED: a write is never served by either meanwhile.
   */
  static String fenced(ClusterView v, int s, boolean tls) {
    if (v.me().equals(v.config().owner(s))) {
      for (io.atoll.core.PodId r : v.replicasOf(v.me())) {
        if (v.config().isActive(r)) {
          return "MOVED " + s + " " + address(v, r, tls);
        }
      }
    }
    return FENCED;
  }

  /** Null if this node serves the call, else the error to reply. The slot's lock is held. */
  static String check(ClusterView v, Call c, CommandSpec spec, int first, int last, int step) {
    Slot slot = c.slot;
    int s = slot.id();
    PodId owner = v.config().owner(s);
    PodId me = v.me();
    PodId migratingTo = v.migrating().get(s);
    PodId importingFrom = v.importing().get(s);
    boolean asking = c.session.asking || spec.has("asking");
    // Managed mode's return (ClusterState.markReturning): both marks name the same peer.
    boolean returning = migratingTo != null && migratingTo.equals(importingFrom);
    if (returning && asking && !me.equals(owner)) {
      return returner(c, first, last, step, s, address(v, migratingTo, c.session.tls()));
    }
    // An ASKING request for a slot being imported is served whatever else this node's view says
    // (a managed node may get a hand-off before it has the manager's config); so is one for a
    // slot this node pulls back, whose keys it lacks only if they are nowhere.
    boolean asked = importingFrom != null && asking && (!me.equals(owner) || returning);
    if (owner == null && !asked) {
      return UNBOUND;
    }
    if (!v.ok() && !asked) {
      return DOWN;
    }
    if (me.equals(owner) && migratingTo == null) {
      return null;
    }
    if (me.equals(owner) && v.standsFor(migratingTo, slot.heldFor())) {
      // Managed hand-off: keys of a batch whose answers timed out may have reached the target
      // late; until they are sent again under a newer attempt (Migrator), neither copy is served.
      for (int i = first; i <= last; i += step) {
        if (slot.isHeld(new Key(c.args[i]))) {
          return TRYAGAIN;
        }
      }
    }
    if (me.equals(owner) || asked) {
      int missing = 0;
      int existing = 0;
      for (int i = first; i <= last; i += step) {
        if (slot.get(new Key(c.args[i]), c.now) == null) {
          missing++;
        } else {
          existing++;
        }
      }
      if (!asked) { // migrating
        if (missing == 0) {
          return null;
        }
        return existing > 0 ? TRYAGAIN : "ASK " + s + " " + address(v, migratingTo, c.session.tls());
      }
      return missing > 0 && missing + existing > 1 ? TRYAGAIN : null;
    }
    if (c.session.readonly && !spec.has("write") && owner.equals(v.myPrimary())) {
      return null; // READONLY: a replica serves reads of its primary's slots, as Redis' replicas
    }
    return "MOVED " + s + " " + address(v, owner, c.session.tls());
  }

  /**
   * A node returning a slot's keys to their source, asked (-ASK from the source) for keys: those
   * still here are served; a key it lacks went back or is nowhere, so the client goes back to the
   * source (which serves it, ASKING, as it is there); a key in the batch on its way back is on
   * neither side for a moment: TRYAGAIN.
   */
  private static String returner(Call c, int first, int last, int step, int s, String source) {
    int missing = 0;
    int existing = 0;
    for (int i = first; i <= last; i += step) {
      Key key = new Key(c.args[i]);
      if (c.slot.get(key, c.now) != null) {
        existing++;
      } else if (c.slot.isLent(key)) {
        return TRYAGAIN;
      } else {
        missing++;
      }
    }
    if (missing == 0) {
      return null;
    }
    return existing > 0 ? TRYAGAIN : "ASK " + s + " " + source;
  }

  /** Where a client reaches {@code id}: on its TLS port if the client came over TLS. */
  private static String address(ClusterView v, PodId id, boolean tls) {
    return id.address().host() + ":" + Nodes.clientPort(v.config(), id, tls);
  }
}
