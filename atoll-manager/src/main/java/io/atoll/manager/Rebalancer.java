package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.manager.ShardManager.RoundResult;
import io.atoll.manager.pods.Pods;
import io.atoll.manager.round.Applied;
import io.atoll.manager.round.KvReplicas;
import io.atoll.manager.round.Outcome;
import io.atoll.manager.round.Plan;
import io.atoll.manager.round.Rounds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rebalance workflow: runs the {@link Rounds} one round at a time — plan, ping, unassign,
 * apply through the {@link Journal}, push — and chains rounds while the limits leave shards to
 * move; each shard space with its own limits and strategy ({@link ManagerSettings#allocation}). A
 * request during a round runs one more round after it; a round that failed in part is retried
 * after the retry interval.
 *
 * <p>Loop-confined. Pods that fail a ping or an unassign are reported to {@code suspects}.
 */
@GuardedBy("loop")
final class Rebalancer {

  private static final Logger log = LoggerFactory.getLogger(Rebalancer.class);

  private final ManagerSettings settings;
  private final Journal journal;
  private final Pods pods;
  private final Loop loop;
  private final RandomGenerator random;
  private final Consumer<Set<PodId>> suspects;
  /** Set once by the manager before the loop runs. */
  ManagerObserver observer = ManagerObserver.NONE;
  /** Pods that asked to drain (loop-confined; read when a round is planned). Set once by the manager. */
  java.util.function.Supplier<Set<PodId>> draining = Set::of;
  /**
   * Pods that renew but cannot be reached on their port (set once, before the loop runs): they are
   * drained too, not pinged (their renewals show they live), and unassigned through their renewals.
   */
  java.util.function.Supplier<Set<PodId>> cutOff = Set::of;

  private boolean rebalancing;
  private boolean again;
  private boolean closed;
  private Loop.Cancellable retry;
  /** Shards to hand back to their owner: released in a round whose transition was not saved. */
  private final Map<Integer, PodId> owed = new java.util.HashMap<>();
  /**
   * Targets of moves a round planned and could not make, while they own no shard: a KV node among
   * them may hold keys of a hand-off that stopped part way, so it is never made a replica
   * ({@link KvReplicas#arrange(io.atoll.core.ClusterConfig, int, Set, Set)}). Kept by this leader
   * only: a new leader starts without them.
   */
  private final Set<PodId> receiving = new HashSet<>();
  private List<CompletableFuture<RoundResult>> nextRoundWaiters = new ArrayList<>();
  private List<CompletableFuture<RoundResult>> roundWaiters = new ArrayList<>();
  // One log line per rebalance, however many rounds its limits split it into.
  private String chainReason = "";
  private int chainMoved;
  private int chainRounds;

  Rebalancer(ManagerSettings settings, Journal journal, Pods pods, Loop loop, RandomGenerator random,
      Consumer<Set<PodId>> suspects) {
    this.settings = settings;
    this.journal = journal;
    this.pods = pods;
    this.loop = loop;
    this.random = random;
    this.suspects = suspects;
  }

  /** Runs a round now, or right after the one running; completes when that round ends. Loop only. */
  CompletableFuture<RoundResult> nextRound() {
    CompletableFuture<RoundResult> f = new CompletableFuture<>();
    nextRoundWaiters.add(f);
    request("requested");
    return f;
  }

  /** Starts a round now, or marks one to run right after the one running. Loop only. */
  void request(String reason) {
    loop.checkOnLoop();
    if (closed) {
      return;
    }
    if (rebalancing) {
      again = true;
      return;
    }
    rebalancing = true;
    observer.roundStarted();
    roundWaiters = nextRoundWaiters;
    nextRoundWaiters = new ArrayList<>();
    if (retry != null) {
      retry.cancel();
      retry = null;
    }
    Set<PodId> cut = cutOff.get();
    if ((settings.kvReplicas() > 0 || KvReplicas.hasReplicas(journal.config()))
        && KvReplicas.arrange(journal.config(), settings.kvReplicas(), draining.get(), Set.copyOf(receiving))
            .changed()) {
      arrangeReplicas(reason);
      return;
    }
    Plan plan = Rounds.plan(journal.config(), settings::allocation, random, drainedNow());
    if (plan.isEmpty()) {
      if (owed.isEmpty()) {
        finish(0, false, false);
      } else {
        apply(reason, List.of(), journal.config().epoch() + 1, Map.of(), false);
      }
      return;
    }
    Map<PodId, CompletableFuture<Boolean>> pings = new LinkedHashMap<>();
    for (PodId p : plan.involved()) {
      pings.put(p, cut.contains(p) ? CompletableFuture.completedFuture(true)
          : pods.ping(p, settings.pingTimeout()).exceptionally(e -> false));
    }
    CompletableFuture.allOf(pings.values().toArray(new CompletableFuture<?>[0]))
        .thenRunAsync(() -> afterPings(reason, plan.moves(), pings, cut), loop);
  }

  /**
   * A step before the round: KV replicas paired, or promoted in place of a primary declared dead
   * ({@link KvReplicas}), saved and pushed to every member; the round follows at once.
   */
  private void arrangeReplicas(String reason) {
    // Only the pods that asked to leave: a replica cut off from the manager still copies its
    // primary, and stays its replica.
    Set<PodId> drained = draining.get();
    Set<PodId> partTargets = Set.copyOf(receiving);
    java.util.concurrent.atomic.AtomicReference<List<String>> changes = new java.util.concurrent.atomic.AtomicReference<>(List.of());
    journal.transition(c -> {
      KvReplicas.Arranged a = KvReplicas.arrange(c, settings.kvReplicas(), drained, partTargets);
      changes.set(a.changes());
      return a.config();
    }).whenCompleteAsync((next, err) -> {
      if (err != null) {
        log.warn("replicas ({}): could not save the new roles: {}", reason, err.toString());
        finish(0, true, false);
        return;
      }
      changes.get().forEach(line -> log.info("replicas: {}", line));
      for (io.atoll.core.Pod p : next.activePods()) {
        pods.push(p.id(), next, settings.pingTimeout());
      }
      finish(0, false, true);
    }, loop);
  }

  private void afterPings(String reason, List<Move> moves, Map<PodId, CompletableFuture<Boolean>> pings,
      Set<PodId> cut) {
    Set<PodId> failed = new HashSet<>();
    pings.forEach((p, f) -> {
      if (!f.join()) {
        failed.add(p);
      }
    });
    List<Move> kept = Rounds.survivors(moves, failed);
    suspects.accept(failed);
    if (closed || (kept.isEmpty() && owed.isEmpty())) {
      if (!failed.isEmpty()) {
        log.warn("rebalance ({}): pods did not answer the ping: {}; retrying in {} ms", reason, failed,
            settings.rebalanceRetryInterval().toMillis());
      }
      finish(0, !failed.isEmpty(), false);
      return;
    }
    long epoch = journal.config().epoch() + 1;
    Duration deadline = settings.terminationTimeout().plus(settings.pingTimeout());
    Map<PodId, CompletableFuture<Optional<Set<Integer>>>> unassigns = new LinkedHashMap<>();
    Map<Integer, PodId> targetOf = new java.util.HashMap<>();
    kept.forEach(m -> targetOf.put(m.shard(), m.to()));
    Rounds.unassignments(kept).forEach((pod, shards) -> unassigns.put(pod,
        (cut.contains(pod)
            // the answer to its next renewal carries it: a renewal period more
            ? pods.unassignByRenewal(pod, shards, shards.stream().map(targetOf::get).toList(), epoch,
                settings.terminationTimeout(), journal.term(), deadline.plus(settings.leaseTtl()))
            : pods.unassign(pod, shards, shards.stream().map(targetOf::get).toList(), epoch,
                settings.terminationTimeout(), journal.term(), deadline))
            .handle((released, e) -> e == null ? Optional.of(released) : Optional.<Set<Integer>>empty())));
    CompletableFuture.allOf(unassigns.values().toArray(new CompletableFuture<?>[0]))
        .thenRunAsync(() -> afterUnassigns(reason, kept, epoch, unassigns, !failed.isEmpty()), loop);
  }

  private void afterUnassigns(String reason, List<Move> kept, long epoch,
      Map<PodId, CompletableFuture<Optional<Set<Integer>>>> unassigns, boolean pingFailed) {
    Map<PodId, Optional<Set<Integer>>> released = new LinkedHashMap<>();
    unassigns.forEach((p, f) -> released.put(p, f.join()));
    apply(reason, kept, epoch, released, pingFailed);
  }

  private void apply(String reason, List<Move> kept, long epoch, Map<PodId, Optional<Set<Integer>>> released,
      boolean pingFailed) {
    if (closed) {
      // Closed while the unassigns were out: save and push nothing more. What the pods released
      // is handed back by the next term's start, as after a save that failed.
      finish(0, false, false);
      return;
    }
    Outcome outcome = Rounds.owing(Rounds.settle(kept, released), owed, kept);
    suspects.accept(outcome.failed());
    Applied[] applied = new Applied[1];
    journal.transition(c -> {
      applied[0] = Rounds.apply(c, outcome, epoch);
      return applied[0].config();
    }).whenCompleteAsync((next, err) -> {
      if (err != null) {
        log.warn("rebalance ({}): could not save the new assignments: {}", reason, err.toString());
        owed.putAll(Rounds.owedAfterFailure(outcome));
        kept.forEach(m -> { // handed back to their sources: keys that reached a target are its alone
          if (m.to() != null) {
            receiving.add(m.to());
          }
        });
        finish(0, true, false);
        return;
      }
      owed.clear(); // handed back, or the shard has another claim since
      Set<Move> made = new HashSet<>(outcome.moves()); // a round may plan every shard: no list scans
      for (Move m : kept) {
        if (m.to() != null && !made.contains(m)) {
          receiving.add(m.to());
        }
      }
      receiving.removeIf(p -> !next.isActive(p) || next.ownedCounts().getOrDefault(p, 0) > 0);
      int moved = applied[0].moved();
      if (moved > 0) {
        if (!reason.equals("continue")) {
          chainReason = reason;
        }
        chainMoved += moved;
        chainRounds++;
      }
      if (!outcome.failed().isEmpty()) {
        log.warn("rebalance ({}): unassign failed on {}; retrying in {} ms", reason, outcome.failed(),
            settings.rebalanceRetryInterval().toMillis());
      }
      for (PodId t : Rounds.pushTargets(outcome)) {
        pods.push(t, next, settings.pingTimeout());
      }
      finish(moved, pingFailed || !outcome.failed().isEmpty(), moved > 0);
    }, loop);
  }

  private void finish(int moved, boolean failed, boolean continueNow) {
    rebalancing = false;
    observer.roundFinished(moved, failed);
    ClusterConfig config = journal.config();
    if (!continueNow && chainMoved > 0) {
      log.info("rebalance ({}): moved {} shards in {} round(s), now at epoch {}; shards per pod: {}", chainReason,
          chainMoved, chainRounds, config.epoch(), ShardManager.shardCounts(config));
      chainMoved = 0;
      chainRounds = 0;
    }
    RoundResult result = new RoundResult(moved, config.epoch(), roundWaiters.isEmpty() ? 0 : remaining(config));
    roundWaiters.forEach(w -> w.complete(result));
    roundWaiters = new ArrayList<>();
    if (closed) {
      return;
    }
    if (again || continueNow) {
      again = false;
      loop.execute(() -> request("continue"));
    } else if (failed) {
      retry = loop.schedule(() -> request("retry"), settings.rebalanceRetryInterval());
    }
  }

  /**
   * The moves a round would plan now without the per-round limits: what is left to do. Planned with
   * its own random, so the rounds' draws stay what they were.
   */
  private int remaining(ClusterConfig config) {
    return Rounds.plan(config, role -> settings.allocation(role).withLimits(RebalanceLimits.UNLIMITED),
        new SplittableRandom(0), drainedNow()).moves().size();
  }

  /** The pods a round gives nothing and takes everything from: draining, and cut off. */
  private Set<PodId> drainedNow() {
    Set<PodId> cut = cutOff.get();
    if (cut.isEmpty()) {
      return draining.get();
    }
    Set<PodId> all = new HashSet<>(draining.get());
    all.addAll(cut);
    return all;
  }

  /** Stops: no more rounds; waiters of rounds not started fail. Loop only. */
  void close() {
    closed = true;
    if (retry != null) {
      retry.cancel();
    }
    IllegalStateException stopped = new IllegalStateException("shard manager is stopping");
    nextRoundWaiters.forEach(w -> w.completeExceptionally(stopped));
    nextRoundWaiters = new ArrayList<>();
  }
}
