package io.atoll.manager.round;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Which managed Atoll KV nodes are replicas, and of whom: a pure function of the config, run by the
 * manager before each rebalance round. A replica's version names its primary's incarnation
 * ({@link PodVersion#kvReplicaOf}); a replica owns no slots, and the allocation strategy never gives
 * it any ({@link Rounds#plan} leaves replicas out).
 *
 * <ol>
 *   <li><b>Promotion.</b> A replica whose primary is no longer an active member (the manager
 *       declared it dead: its lease and the margin ran out, so it serves nothing any more) takes
 *       every slot that primary still owns, at a new epoch (each claim keeping the previous owner
 *       it recorded: the replica goes on with its primary's tenure), and becomes a primary. One replica per dead primary (the first by join
 *       order; even one that is draining: the strategy then hands the slots on); its other
 *       replicas become the promoted one's. The dead primary's tombstone names the promoted
 *       replica as its heir ({@link PodVersion#kvTakenOverBy}): nodes whose migration marks or
 *       import records name the dead node go on with the heir. A replica whose primary left with no slots is promoted all
 *       the same (it may hold keys of hand-offs to that primary under way); one whose primary is
 *       itself a replica becomes a node of its own (a spare), and so does a replica that drains. A
 *       node named as heir is never a spare: it stays a primary. Pairs stay
 *       when {@code replicas} is lowered (a manager restarted without it dissolves nothing).
 *   <li><b>Pairing.</b> Each spare (an active KV node that is not draining, owns no slots and is
 *       no replica), in join order, becomes a replica of the primary with the fewest replicas
 *       below {@code replicas}; when every primary has its replicas, it stays a primary and the
 *       strategy gives it slots (later spares may replicate it). So nodes joining one by one, or
 *       all at once, end as {@code ceil(n / (replicas + 1))} primaries with their replicas.
 * </ol>
 *
 * <p>What this rests on is the manager's own rule: it declares a node dead only once its lease and
 * the margin ran out, and a KV node serves nothing after its lease. With writes acknowledged only
 * once a replica has them (the nodes' {@code --min-replicas-to-ack}), the promoted replica holds
 * every write its primary acknowledged. Idempotent: arranging an arranged config changes nothing.
 */
public final class KvReplicas {

  private KvReplicas() {}

  /**
   * A config with its replicas arranged, and what changed (for the log).
   *
   * @param config the arranged config, the very instance given when nothing changed
   * @param changes one line per node whose role changed
   */
  public record Arranged(ClusterConfig config, List<String> changes) {
    /** Whether anything changed. */
    public boolean changed() {
      return !changes.isEmpty();
    }
  }

  /** Whether {@code config} has a KV replica among its active pods. */
  public static boolean hasReplicas(ClusterConfig config) {
    return !replicasAmong(config.activePods()).isEmpty();
  }

  /**
   * Arranges {@code config}'s replicas.
   *
   * @param replicas how many replicas each primary should have, 0 to {@code 5}
   * @param draining pods that are leaving: never given a role (a replica among them is promoted
   *     all the same when its primary died)
   */
  public static Arranged arrange(ClusterConfig config, int replicas, Set<PodId> draining) {
    return arrange(config, replicas, draining, Set.of());
  }

  /**
   * As above; {@code receiving} are nodes that may hold keys of hand-offs to them that stopped part
   * way (the targets of moves a round planned and could not make): never made replicas, since a
   * replica's copy of its primary would replace those keys, their only copy.
   */
  public static Arranged arrange(ClusterConfig config, int replicas, Set<PodId> draining, Set<PodId> receiving) {
    List<PodEntry> kv = new ArrayList<>();
    for (PodEntry e : config.pods()) {
      if (e.status() == PodStatus.ACTIVE && e.pod().version().isKv()) {
        kv.add(e);
      }
    }
    if (kv.isEmpty()) {
      return new Arranged(config, List.of());
    }
    kv.sort(JOIN_ORDER);
    long epoch = config.epoch() + 1;
    Map<PodId, PodVersion> version = new LinkedHashMap<>();
    for (PodEntry e : kv) {
      version.put(e.id(), e.pod().version());
    }
    List<String> changes = new ArrayList<>();
    Map<Integer, PodId> claims = new HashMap<>(); // position -> new owner
    Map<PodId, PodId> promoted = new HashMap<>(); // dead primary -> the replica that took its slots
    Map<PodEntry, PodId> heirs = new LinkedHashMap<>(); // the dead primary's tombstone -> that replica

    // 1. Replicas whose primary is not an active primary.
    for (PodEntry r : kv) {
      OptionalLong of = r.pod().version().kvPrimary();
      if (of.isEmpty()) {
        continue;
      }
      PodEntry p = byIncarnation(config, of.getAsLong());
      boolean primaryLives = p != null && p.status() == PodStatus.ACTIVE && p.pod().version().equals(PodVersion.KV);
      boolean leaving = draining.contains(r.id());
      if (primaryLives) {
        // Pairs stay when --replicas is lowered (a manager restarted without it must not dissolve
        // them: the replicas would drop their copies); a replica that leaves ends its pair.
        if (leaving) {
          version.put(r.id(), PodVersion.KV);
          changes.add(r.id() + " no longer replicates " + p.id() + " (it is leaving)");
        }
        continue;
      }
      if (p == null || p.status() == PodStatus.ACTIVE) {
        // Its primary is unknown, or is itself a replica now.
        version.put(r.id(), PodVersion.KV);
        changes.add(r.id() + " no longer replicates" + (p == null ? "" : " " + p.id()));
        continue;
      }
      PodId dead = p.id();
      PodId heir = promoted.get(dead);
      if (heir != null) {
        version.put(r.id(), leaving ? PodVersion.KV : PodVersion.kvReplicaOf(heir.incarnation()));
        changes.add(r.id() + (leaving ? " no longer replicates " + dead + " (it is leaving)"
            : " replicates " + heir + ", which took over from " + dead));
        continue;
      }
      List<Integer> taken = new ArrayList<>();
      for (int pos = 0; pos < config.size(); pos++) {
        if (dead.equals(config.owner(pos))) {
          taken.add(pos);
        }
      }
      version.put(r.id(), PodVersion.KV);
      // Promoted even if it is leaving or cut off: it holds the keys; the strategy then hands its
      // slots on as it does a draining node's. A primary that owned no slot may still have held
      // keys of hand-offs to it under way (its first slots arriving): the heir holds those too.
      promoted.put(dead, r.id());
      heirs.put(p, r.id());
      taken.forEach(pos -> claims.put(pos, r.id()));
      changes.add(r.id() + " takes over " + (taken.isEmpty() ? "no shard (only hand-offs under way)" : taken.size()
          + " shards") + " from " + dead + ", which was declared dead");
    }

    // 2. Spares become replicas of primaries that lack them.
    if (replicas > 0) {
      Map<PodId, Integer> owned = new HashMap<>();
      for (int pos = 0; pos < config.size(); pos++) {
        PodId o = claims.getOrDefault(pos, config.owner(pos));
        if (o != null) {
          owned.merge(o, 1, Integer::sum);
        }
      }
      // Primaries that have a replica, or went on with a dead primary: primaries still without
      // slots too (an heir may hold keys of hand-offs to its predecessor under way).
      Set<Long> named = new HashSet<>();
      for (PodEntry e : kv) {
        version.get(e.id()).kvPrimary().ifPresent(named::add);
      }
      heirs.values().forEach(h -> named.add(h.incarnation()));
      for (PodEntry e : config.pods()) {
        if (e.status() != PodStatus.ACTIVE) {
          e.pod().version().kvHeir().ifPresent(named::add);
        }
      }
      Map<Long, PodEntry> primaries = new LinkedHashMap<>(); // incarnation -> primary, join order
      Map<Long, Integer> count = new HashMap<>();
      List<PodEntry> spares = new ArrayList<>();
      for (PodEntry e : kv) {
        if (!version.get(e.id()).equals(PodVersion.KV) || draining.contains(e.id())) {
          continue;
        }
        if (owned.getOrDefault(e.id(), 0) > 0 || named.contains(e.id().incarnation()) || receiving.contains(e.id())) {
          primaries.put(e.id().incarnation(), e);
          count.put(e.id().incarnation(), 0);
        } else {
          spares.add(e);
        }
      }
      for (PodEntry e : kv) {
        OptionalLong of = version.get(e.id()).kvPrimary();
        if (of.isPresent() && count.containsKey(of.getAsLong())) {
          count.merge(of.getAsLong(), 1, Integer::sum);
        }
      }
      for (PodEntry s : spares) {
        // The primary with the fewest replicas; among those, one that owns slots (it holds keys
        // now) before one that does not yet; then join order.
        PodEntry best = null;
        for (PodEntry p : primaries.values()) {
          int c = count.get(p.id().incarnation());
          if (c >= replicas) {
            continue;
          }
          int b = best == null ? Integer.MAX_VALUE : count.get(best.id().incarnation());
          boolean holds = owned.getOrDefault(p.id(), 0) > 0;
          if (best == null || c < b || c == b && holds && owned.getOrDefault(best.id(), 0) == 0) {
            best = p;
          }
        }
        if (best == null) {
          primaries.put(s.id().incarnation(), s); // a primary to be: the strategy gives it slots
          count.put(s.id().incarnation(), 0);
          continue;
        }
        count.merge(best.id().incarnation(), 1, Integer::sum);
        version.put(s.id(), PodVersion.kvReplicaOf(best.id().incarnation()));
        changes.add(s.id() + " becomes a replica of " + best.id());
      }
    }

    if (changes.isEmpty()) {
      return new Arranged(config, List.of());
    }
    ClusterConfig.Builder b = config.toBuilder();
    for (PodEntry e : kv) {
      PodVersion v = version.get(e.id());
      if (!v.equals(e.pod().version())) {
        Pod p = e.pod();
        b.pod(new PodEntry(new Pod(p.id(), v, p.roles(), p.tlsPort()), PodStatus.ACTIVE, epoch));
      }
    }
    // The dead primary's tombstone names its heir: nodes whose migration marks or import records
    // name the dead node go on with the heir, which holds the same marks and records (mirrored).
    heirs.forEach((p, heir) -> b.pod(new PodEntry(new Pod(p.id(), PodVersion.kvTakenOverBy(heir.incarnation()),
        p.pod().roles(), p.pod().tlsPort()), p.status(), epoch)));
    // The promoted replica goes on with its primary's tenure, keys and import records alike: each
    // claim keeps the previous owner it recorded (docs/architecture.md, "Keys left on a target").
    claims.forEach((pos, owner) -> b.claim(pos, Claim.stable(owner, config.claim(pos).previousOwner(), epoch)));
    return new Arranged(b.build(), List.copyOf(changes));
  }

  /** Join order: the epoch of a node's entry (when it joined, or last changed role), then its id. */
  private static final Comparator<PodEntry> JOIN_ORDER =
      Comparator.comparingLong(PodEntry::epoch).thenComparing(PodEntry::id);

  /** The entry of the KV node of this incarnation, an active one first; null if none is listed. */
  private static PodEntry byIncarnation(ClusterConfig config, long incarnation) {
    PodEntry found = null;
    for (PodEntry e : config.pods()) {
      if (e.id().incarnation() == incarnation && e.pod().version().isKv()) {
        if (e.status() == PodStatus.ACTIVE) {
          return e;
        }
        found = e;
      }
    }
    return found;
  }

  /** The pods of {@code pods} that are KV replicas. */
  static Set<PodId> replicasAmong(List<Pod> pods) {
    Set<PodId> r = new HashSet<>();
    for (Pod p : pods) {
      if (p.version().kvPrimary().isPresent()) {
        r.add(p.id());
      }
    }
    return r;
  }
}
