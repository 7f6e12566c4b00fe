package io.atoll.kv.internal.cluster;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import java.util.Map;

/**
 * Redis-cluster mode's edits of who replicates whom, as pure functions for {@link ClusterState}.
 * A node's role lives in its own config entry ({@link Nodes#primaryOf}); every change of it takes
 * a config epoch greater than any in the config, so that the node's latest word wins every merge
 * (an entry of equal epoch would be settled by its text, not by which is newer).
 */
final class Replicas {
  private Replicas() {}

  /** {@code c} with {@code me} a replica of {@code primaryNodeId}, at a new epoch. */
  static ClusterConfig follow(ClusterConfig c, PodId me, String primaryNodeId) {
    PodEntry mine = c.pod(me).orElseThrow();
    return c.toBuilder().pod(new PodEntry(Nodes.withPrimary(mine.pod(), primaryNodeId), mine.status(),
        c.epoch() + 1)).build();
  }

  /**
   * {@code c} with {@code me} a primary at a new epoch (above {@code c}'s and {@code minEpoch})
   * that owns every slot {@code primary} owned, claimed at that epoch.
   */
  static ClusterConfig takeOver(ClusterConfig c, PodId me, PodId primary, long minEpoch) {
    PodEntry mine = c.pod(me).orElseThrow();
    long epoch = Math.max(c.epoch(), minEpoch) + 1;
    ClusterConfig.Builder b = c.toBuilder().pod(new PodEntry(Nodes.withPrimary(mine.pod(), null), mine.status(),
        epoch));
    for (int s = 0; s < c.size(); s++) {
      if (primary.equals(c.owner(s))) {
        b.claim(s, Claim.stable(me, epoch));
      }
    }
    return b.build();
  }

  /**
   * After a merge from {@code before} to {@code after}: the primary this node must now follow, or
   * null if nothing changed for it. As Redis does when a replica took its primary's slots: the old
   * primary, having lost every slot to its own replica, becomes that node's replica; so do the
   * other replicas of the old primary, once it is a replica itself or has lost its slots so.
   */
  static PodId newPrimary(ClusterView before, ClusterView after) {
    PodId me = after.me();
    PodId myPrimary = after.myPrimary();
    if (myPrimary == null) {
      return takenBy(before, after, me);
    }
    PodId next = after.primaryOf(myPrimary);
    if (next != null && !next.equals(me)) {
      return next; // my primary follows another node now: so do I
    }
    PodId taker = takenBy(before, after, myPrimary);
    return taker != null && !taker.equals(me) ? taker : null;
  }

  /**
   * The node that took every slot {@code primary} owned in {@code before}, if it was a replica of
   * {@code primary} there and is a primary now; else null.
   */
  private static PodId takenBy(ClusterView before, ClusterView after, PodId primary) {
    Map<PodId, Integer> had = before.config().ownedCounts();
    if (had.getOrDefault(primary, 0) == 0 || after.config().ownedCounts().getOrDefault(primary, 0) > 0) {
      return null;
    }
    PodId taker = null;
    for (int s = 0; s < before.config().size(); s++) {
      if (primary.equals(before.config().owner(s))) {
        PodId now = after.config().owner(s);
        if (now == null || (taker != null && !taker.equals(now))) {
          return null;
        }
        taker = now;
      }
    }
    boolean wasReplica = taker != null && primary.equals(before.primaryOf(taker));
    return wasReplica && after.primaryOf(taker) == null ? taker : null;
  }
}
