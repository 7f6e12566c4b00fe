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

  /** Null if this node serves the call, else the error to reply. The slot's lock is held. */
  static String check(ClusterView v, Call c, CommandSpec spec, int first, int last, int step) {
    Slot slot = c.slot;
    int s = slot.id();
    PodId owner = v.config().owner(s);
    PodId me = v.me();
    PodId migratingTo = v.migrating().get(s);
    PodId importingFrom = v.importing().get(s);
    // An ASKING request for a slot being imported is served whatever else this node's view says
    // (a managed node may get a hand-off before it has the manager's config).
    boolean asked = importingFrom != null && !me.equals(owner) && (c.session.asking || spec.has("asking"));
    if (owner == null && !asked) {
      return UNBOUND;
    }
    if (!v.ok() && !asked) {
      return DOWN;
    }
    if (me.equals(owner) && migratingTo == null) {
      return null;
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
      if (me.equals(owner)) { // migrating
        if (missing == 0) {
          return null;
        }
        return existing > 0 ? TRYAGAIN : "ASK " + s + " " + address(v, migratingTo, c.session.tls());
      }
      return missing > 0 && missing + existing > 1 ? TRYAGAIN : null;
    }
    return "MOVED " + s + " " + address(v, owner, c.session.tls());
  }

  /** Where a client reaches {@code id}: on its TLS port if the client came over TLS. */
  private static String address(ClusterView v, PodId id, boolean tls) {
    return id.address().host() + ":" + Nodes.clientPort(v.config(), id, tls);
  }
}
