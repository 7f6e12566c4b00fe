package io.atoll.kv.internal.cluster;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.slots.KeySlots;
import java.util.Set;

/** Redis-cluster mode's edits of a config, as pure functions for {@link ClusterState}'s commands. */
final class ConfigEdits {
  private ConfigEdits() {}

  /** Refuses a slot named twice, with Redis' text. */
  static void checkUnique(int[] slots) {
    boolean[] seen = new boolean[KeySlots.SLOT_COUNT];
    for (int s : slots) {
      if (seen[s]) {
        throw new ClusterState.Refused("ERR Slot " + s + " specified multiple times");
      }
      seen[s] = true;
    }
  }

  /** Whether another active node has config epoch {@code epoch} (a collision to bump out of). */
  static boolean epochShared(ClusterConfig c, PodId me, long epoch) {
    for (PodEntry e : c.pods()) {
      if (!e.id().equals(me) && e.status() == PodStatus.ACTIVE && e.epoch() == epoch) {
        return true;
      }
    }
    return false;
  }

  /** This node's config epoch in {@code c} (0 if it is not listed). */
  static long myEpoch(ClusterConfig c, PodId me) {
    return c.pod(me).map(PodEntry::epoch).orElse(0L);
  }

  /** The config without these pods: their slots unassigned, their entries gone. */
  static ClusterConfig without(ClusterConfig c, Set<PodId> gone) {
    boolean any = false;
    for (PodId id : gone) {
      any |= c.pod(id).isPresent();
    }
    if (!any) {
      return c;
    }
    ClusterConfig.Builder b = c.toBuilder();
    for (int s = 0; s < c.size(); s++) {
      PodId o = c.owner(s);
      Claim cl = c.claim(s);
      if (o != null && gone.contains(o)) {
        b.claim(s, Claim.offline(c.epoch(s)));
      } else if (cl.peer() != null && gone.contains(cl.peer())) {
        b.claim(s, Claim.stable(o, cl.epoch()));
      }
    }
    for (PodId id : gone) {
      b.removePod(id);
    }
    return b.build();
  }

  /** {@code c} with this node's entry at {@code epoch} and its own claims raised to it. */
  static ClusterConfig restamp(ClusterConfig c, PodId me, long epoch) {
    PodEntry mine = c.pod(me).orElseThrow();
    ClusterConfig.Builder b = c.toBuilder().pod(new PodEntry(mine.pod(), mine.status(), epoch));
    for (int s = 0; s < c.size(); s++) {
      if (me.equals(c.owner(s)) && c.epoch(s) < epoch) {
        b.claim(s, new Claim(me, c.state(s), c.claim(s).peer(), epoch));
      }
    }
    return b.build();
  }
}
