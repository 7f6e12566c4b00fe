package io.atoll.manager.round;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.allocation.SpaceAllocation;
import io.atoll.core.allocation.SpacedAllocation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The steps of a rebalance round and the membership changes, as pure functions. Each takes plain
 * values and returns new ones; none reads a clock, a store or a pod.
 *
 * <p>The round, in the order the manager runs it:
 *
 * <ol>
 *   <li>{@link #plan}: the strategy's moves over the active pods, and the pods they involve;
 *   <li>{@link #survivors}: the moves whose pods all answered the ping;
 *   <li>{@link #unassignments}: the shards to take from each old owner, by owner;
 *   <li>{@link #settle}: from what each old owner released (or that it did not answer), the moves
 *       to make and the shards to hand back;
 *   <li>{@link #apply}: the outcome applied to the config installed by then, re-checking every
 *       move against it — the one place where moves become claims.
 * </ol>
 */
public final class Rounds {

  private Rounds() {}

  /**
   * Plans a round: the strategy decides over the config's active pods, once per shard space over
   * the pods hosting its role ({@link SpacedAllocation}), every space with the same strategy and
   * limits.
   */
  public static Plan plan(ClusterConfig config, AllocationStrategy strategy, RebalanceLimits limits,
      RandomGenerator random) {
    return plan(config, strategy, limits, random, Set.of());
  }

  /**
   * Plans a round in which the {@code draining} pods get nothing and give everything away: the
   * strategy decides over the other active pods, so it places the draining pods' shards as if they
   * had no owner, and each such placement becomes a move from the draining owner (a hand-off
   * through Unassign, never a plain allocation, since that owner still serves the shard).
   */
  public static Plan plan(ClusterConfig config, AllocationStrategy strategy, RebalanceLimits limits,
      RandomGenerator random, Set<PodId> draining) {
    SpaceAllocation same = new SpaceAllocation(strategy, limits);
    return plan(config, role -> same, random, draining);
  }

  /**
   * Plans a round as {@link #plan(ClusterConfig, AllocationStrategy, RebalanceLimits,
   * RandomGenerator, Set)} does, each space with the strategy and limits {@code allocationOf}
   * gives for its role: a space with a limit of 1 moves at most one owned shard in the round,
   * whatever the other spaces' limits.
   */
  public static Plan plan(ClusterConfig config, Function<String, SpaceAllocation> allocationOf,
      RandomGenerator random, Set<PodId> draining) {
    List<Pod> candidates = config.activePods();
    if (!draining.isEmpty()) {
      candidates = candidates.stream().filter(p -> !draining.contains(p.id())).toList();
    }
    // KV replicas own nothing: they copy their primary's slots and take them only when promoted
    // (KvReplicas).
    Set<PodId> replicas = KvReplicas.replicasAmong(candidates);
    if (!replicas.isEmpty()) {
      candidates = candidates.stream().filter(p -> !replicas.contains(p.id())).toList();
    }
    List<Move> moves = SpacedAllocation.decide(allocationOf, config, candidates, random);
    if (!draining.isEmpty()) {
      List<Move> handOffs = new ArrayList<>(moves.size());
      for (Move m : moves) {
        PodId owner = config.activeOwner(m.shard() - 1);
        handOffs.add(m.from() == null && owner != null && draining.contains(owner)
            ? new Move(m.shard(), owner, m.to()) : m);
      }
      moves = handOffs;
    }
    Set<PodId> involved = new TreeSet<>();
    for (Move m : moves) {
      involved.add(m.to());
      if (m.from() != null) {
        involved.add(m.from());
      }
    }
    return new Plan(moves, involved);
  }

  /** The moves none of whose pods is in {@code failedPings}, in their order. */
  public static List<Move> survivors(List<Move> moves, Set<PodId> failedPings) {
    return moves.stream()
        .filter(m -> !failedPings.contains(m.to()) && (m.from() == null || !failedPings.contains(m.from())))
        .toList();
  }

  /** The shards each old owner must release, by owner in id order; allocations need none. */
  public static Map<PodId, List<Integer>> unassignments(List<Move> moves) {
    Map<PodId, List<Integer>> byOwner = new TreeMap<>();
    for (Move m : moves) {
      if (m.from() != null) {
        byOwner.computeIfAbsent(m.from(), k -> new ArrayList<>()).add(m.shard());
      }
    }
    return byOwner;
  }

  /**
   * Settles a round from the unassign answers.
   *
   * @param moves the surviving moves
   * @param released per old owner, the shards it released; an owner that did not answer maps to
   *     {@link Optional#empty()} (or is missing)
   */
  public static Outcome settle(List<Move> moves, Map<PodId, Optional<Set<Integer>>> released) {
    List<Move> made = new ArrayList<>();
    Map<Integer, PodId> regrants = new HashMap<>();
    Set<PodId> failed = new HashSet<>();
    for (Move m : moves) {
      if (m.from() == null) {
        made.add(m);
        continue;
      }
      Optional<Set<Integer>> r = released.getOrDefault(m.from(), Optional.empty());
      if (r.isEmpty()) {
        failed.add(m.from());
        regrants.put(m.shard(), m.from());
      } else if (r.get().contains(m.shard())) {
        made.add(m);
      }
      // else: the owner kept it (it holds a newer claim); the move is dropped
    }
    return new Outcome(made, regrants, failed);
  }

  /**
   * Applies a settled round to {@code config}, re-checking each move against it: a move is made
   * only while its old owner still holds the shard (or, for an allocation, nobody active does)
   * and its target is active. A released shard whose target left meanwhile goes back to its old
   * owner; a regrant is made only while that pod still owns the shard. Every claim written gets
   * one epoch, at least {@code epoch} and newer than anything in {@code config}.
   */
  public static Applied apply(ClusterConfig config, Outcome outcome, long epoch) {
    long e = Math.max(epoch, config.epoch() + 1);
    ClusterConfig.Builder b = config.toBuilder();
    boolean any = false;
    int moved = 0;
    for (Move m : outcome.moves()) {
      int pos = m.shard() - 1;
      boolean fromHolds = m.from() == null
          ? config.activeOwner(pos) == null
          : m.from().equals(config.owner(pos));
      if (!fromHolds) {
        continue;
      }
      if (config.isActive(m.to())) {
        b.claim(pos, placed(config, pos, m.to(), e));
        moved++;
        any = true;
      } else if (m.from() != null) {
        // The old owner released it but the target is gone: hand it back at the new epoch, or
        // the old owner would wait for a claim that never comes.
        b.claim(pos, placed(config, pos, m.from(), e));
        any = true;
      }
    }
    for (Map.Entry<Integer, PodId> r : outcome.regrants().entrySet()) {
      int pos = r.getKey() - 1;
      if (r.getValue().equals(config.owner(pos))) {
        b.claim(pos, placed(config, pos, r.getValue(), e));
        any = true;
      }
    }
    return new Applied(any ? b.build() : config, moved);
  }

  /**
   * The STABLE claim that gives position {@code pos} of {@code config} to {@code to} at {@code e}.
   * For an Atoll KV node it records the previous owner ({@link Claim#previousOwner}): the current
   * owner when the position changes hands, else (a regrant, a hand-back, a new term) the one the
   * current claim records, so that it always names the owner before this owner's tenure. A KV node
   * holding keys of a hand-off needs it to tell a slot that came straight from that hand-off's
   * source from one a third node held in between (see docs/architecture.md, <i>Keys left on a
   * target</i>). Entity pods get plain claims, so their configs keep their encoding.
   */
  static Claim placed(ClusterConfig config, int pos, PodId to, long e) {
    boolean kv = config.pod(to).map(p -> p.pod().version().equals(PodVersion.KV)).orElse(false);
    if (!kv) {
      return Claim.stable(to, e);
    }
    Claim current = config.claim(pos);
    return Claim.stable(to, to.equals(current.owner()) ? current.previousOwner() : current.owner(), e);
  }

  /**
   * The regrants a round owes after its transition could not be saved: the old owner of every
   * move and regrant may have released its shard (and will not serve it again below the round's
   * epoch), while the installed config still names it. Until a claim at a newer epoch reaches it,
   * the shard is served by nobody, so the next round must hand these back (see {@link #owing}).
   */
  public static Map<Integer, PodId> owedAfterFailure(Outcome outcome) {
    Map<Integer, PodId> owed = new HashMap<>(outcome.regrants());
    for (Move m : outcome.moves()) {
      if (m.from() != null) {
        owed.put(m.shard(), m.from());
      }
    }
    return owed;
  }

  /**
   * {@code outcome} with the regrants owed by earlier rounds added, except for shards this
   * round's {@code moves} take care of. Like every regrant, each is applied only while its pod
   * still owns the shard.
   */
  public static Outcome owing(Outcome outcome, Map<Integer, PodId> owed, List<Move> moves) {
    if (owed.isEmpty()) {
      return outcome;
    }
    Set<Integer> moving = new HashSet<>();
    moves.forEach(m -> moving.add(m.shard()));
    Map<Integer, PodId> regrants = new HashMap<>();
    owed.forEach((shard, pod) -> {
      if (!moving.contains(shard)) {
        regrants.put(shard, pod);
      }
    });
    regrants.putAll(outcome.regrants());
    return new Outcome(outcome.moves(), regrants, outcome.failed());
  }

  /** The pods to push the applied config to: every target and every pod a shard went back to. */
  public static Set<PodId> pushTargets(Outcome outcome) {
    Set<PodId> targets = new TreeSet<>();
    outcome.moves().forEach(m -> targets.add(m.to()));
    targets.addAll(outcome.regrants().values());
    return targets;
  }

  /**
   * The start of a term: every shard owned by an active pod is re-issued to that pod at one new
   * epoch, which ends any hand-off the previous term left half done (a pod that released a shard
   * waits for a claim at least as new as the release).
   */
  public static ClusterConfig reassert(ClusterConfig config) {
    long e = config.epoch() + 1;
    ClusterConfig.Builder b = config.toBuilder();
    boolean any = false;
    for (int pos = 0; pos < config.size(); pos++) {
      PodId owner = config.activeOwner(pos);
      if (owner != null) {
        b.claim(pos, placed(config, pos, owner, e));
        any = true;
      }
    }
    return any ? b.build() : config;
  }

  /**
   * The config with a space of {@code count} shards appended, in the order given, for each of
   * {@code roles} that has none (a new role's first pod registers). Every existing global shard
   * keeps its number and claim; the new positions are OFFLINE with no owner until a round places
   * them, on pods of their role only. Unchanged if every role has a space or {@code count} is 0.
   *
   * @throws IllegalArgumentException naming the role and the bound if the layout would exceed
   *     {@code maxShards} shards or {@link io.atoll.core.Spaces#MAX_SPACES} spaces
   */
  public static ClusterConfig grow(ClusterConfig config, List<String> roles, int count, int maxShards) {
    io.atoll.core.Spaces layout = config.spaces();
    if (count == 0) {
      return config;
    }
    for (String role : roles) {
      if (layout.of(role) != null) {
        continue;
      }
      String name = role.isEmpty() ? "default" : role;
      for (Pod p : config.activePods()) {
        if (p.version().isKv()) {
          // KV nodes refuse every config of more than the one slot space: a grown layout would
          // leave them serving a config they can no longer follow.
          throw new IllegalArgumentException("space '" + name + "': this manager serves Atoll KV nodes (pod "
              + p.id() + "), which follow only the one slot space (expected: pods of other roles at a manager of"
              + " their own; no space is appended while a KV node is a member)");
        }
      }
      if ((long) layout.size() + count > maxShards) {
        throw new IllegalArgumentException("space '" + name + "': " + count + " more shards would make "
            + (layout.size() + count) + " (expected: at most " + maxShards + " shards in all; the layout "
            + layout + " is full)");
      }
      if (layout.list().size() >= io.atoll.core.Spaces.MAX_SPACES) {
        throw new IllegalArgumentException("space '" + name + "': the layout has " + layout.list().size()
            + " spaces (expected: at most " + io.atoll.core.Spaces.MAX_SPACES + ")");
      }
      layout = layout.append(role, count);
    }
    return config.extendTo(layout);
  }

  /**
   * The spaces of {@code config} whose role no active pod hosts, in layout order: reported, not
   * dropped (their shards wait, unowned or on a dead owner, until a pod of the role registers).
   */
  public static List<io.atoll.core.Space> unhosted(ClusterConfig config) {
    List<io.atoll.core.Space> out = new ArrayList<>();
    List<Pod> active = config.activePods();
    for (io.atoll.core.Space s : config.spaces().list()) {
      if (active.stream().noneMatch(p -> p.hosts(s.role()))) {
        out.add(s);
      }
    }
    return out;
  }

  /** A pod joins: its entry, ACTIVE, at a new epoch. */
  public static ClusterConfig join(ClusterConfig config, Pod pod) {
    Objects.requireNonNull(pod, "pod");
    return config.toBuilder().pod(new PodEntry(pod, PodStatus.ACTIVE, config.epoch() + 1)).build();
  }

  /** A pod is gone (it left or died): its entry becomes GONE at a new epoch; unchanged if absent or gone. */
  public static ClusterConfig leave(ClusterConfig config, PodId pod) {
    Optional<PodEntry> cur = config.pod(pod);
    if (cur.isEmpty() || cur.get().status() == PodStatus.GONE) {
      return config;
    }
    return config.toBuilder().pod(new PodEntry(cur.get().pod(), PodStatus.GONE, config.epoch() + 1)).build();
  }

  /**
   * A config with its oldest tombstones pruned, and the pods whose tombstones went.
   *
   * @param config the config after pruning
   * @param pruned the pods no longer listed, oldest first
   */
  public record Pruned(ClusterConfig config, List<PodId> pruned) {}

  /**
   * Keeps at most {@code keep} tombstones (GONE entries): the oldest beyond that are removed,
   * oldest epoch first. Never removed: a tombstone some claim still names (as owner or peer),
   * and one whose epoch is the config's epoch, so that pruning never lowers {@link
   * ClusterConfig#epoch()} (pods compare configs by it, and the next epoch is counted from it).
   */
  public static Pruned pruneTombstones(ClusterConfig config, int keep) {
    List<PodEntry> gone = new ArrayList<>();
    for (PodEntry e : config.pods()) {
      if (e.status() == PodStatus.GONE) {
        gone.add(e);
      }
    }
    if (gone.size() <= keep) {
      return new Pruned(config, List.of());
    }
    Set<PodId> named = new HashSet<>();
    for (int pos = 0; pos < config.size(); pos++) {
      Claim c = config.claim(pos);
      if (c.owner() != null) {
        named.add(c.owner());
      }
      if (c.peer() != null) {
        named.add(c.peer());
      }
    }
    long top = config.epoch();
    List<PodEntry> candidates = new ArrayList<>();
    for (PodEntry e : gone) {
      if (!named.contains(e.id()) && e.epoch() < top) {
        candidates.add(e);
      }
    }
    candidates.sort(Comparator.comparingLong(PodEntry::epoch).thenComparing(PodEntry::id));
    int remove = Math.min(candidates.size(), gone.size() - keep);
    if (remove == 0) {
      return new Pruned(config, List.of());
    }
    ClusterConfig.Builder b = config.toBuilder();
    List<PodId> pruned = new ArrayList<>(remove);
    for (int i = 0; i < remove; i++) {
      b.removePod(candidates.get(i).id());
      pruned.add(candidates.get(i).id());
    }
    return new Pruned(b.build(), List.copyOf(pruned));
  }
}
