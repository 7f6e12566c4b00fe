package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Spaces;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The rebalance workflow around the real manager, scripted on the simulation's virtual clock. */
class RebalancerTest {

  static Simulation cluster(int shards, RebalanceLimits limits) {
    Simulation sim = new Simulation(42, Simulation.settings(shards, limits, AllocationStrategy.versionAware()), false,
        0);
    sim.faults = false;
    sim.relayedUnassigns = false; // the manager pings no pod between rounds: each script's timing stays its own
    return sim;
  }

  /** Runs until the store has saved once more, in steps of 1 ms (at most 5 s). */
  private static void untilNextSave(Simulation sim) {
    int saves = sim.store.saves;
    for (int i = 0; i < 5000 && sim.store.saves == saves; i++) {
      sim.vt.advance(Duration.ofMillis(1));
    }
    assertThat(sim.store.saves).isGreaterThan(saves);
  }

  /**
   * Regression, found by the simulation (seed -1098667091133861232): a pod released shards in a
   * round whose new assignments could not be saved; the config still named it, but it would not
   * serve them below the round's epoch, and the retry round moved other shards — those stayed
   * served by nobody until the next manager restart.
   */
  @Test
  void shardsReleasedInARoundThatCouldNotBeSavedAreHandedBack() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 10);
    sim.join("1.0");
    untilNextSave(sim); // the second pod's registration
    sim.store.failSaves(1, MemoryStore.Failure.BEFORE_WRITE);
    sim.vt.advance(Duration.ofMillis(60)); // the round: ping, unassign, a save that fails
    ClusterConfig c = sim.installed();
    assertThat(c.ownedCounts()).as("nothing moved yet").containsEntry(a.id(), 10);
    long unserved = java.util.stream.IntStream.range(0, 10).filter(pos -> !a.serving(pos, sim.now())).count();
    assertThat(unserved).as("the first pod released shards in the failed round").isPositive();
    sim.quietAndCheck(); // every shard owned and served, spread at most one
  }

  @Test
  void shardsReleasedInARoundThatCouldNotBeSavedAreHandedBackEvenWhenNothingElseMoves() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    SimPod b = sim.join("1.0");
    untilNextSave(sim);
    sim.store.failSaves(1, MemoryStore.Failure.BEFORE_WRITE);
    sim.vt.advance(Duration.ofMillis(60));
    sim.leave(b); // the next rounds plan nothing: the only pod left owns every shard
    sim.vt.advance(Duration.ofSeconds(3));
    ClusterConfig c = sim.installed();
    assertThat(c.isActive(b.id())).isFalse();
    for (int pos = 0; pos < 10; pos++) {
      assertThat(a.serving(pos, sim.now())).as("shard %s", pos + 1).isTrue();
    }
  }

  @Test
  void aRoundWhoseSaveWasWrittenButReportedFailedInstallsItAndSettles() {
    Simulation sim = cluster(12, RebalanceLimits.UNLIMITED);
    sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    sim.join("1.0");
    untilNextSave(sim);
    sim.store.failSaves(1, MemoryStore.Failure.AFTER_WRITE);
    sim.vt.advance(Duration.ofMillis(60));
    assertThat(sim.installed().ownedCounts().values()).containsExactlyInAnyOrder(6, 6);
    sim.quietAndCheck();
  }

  @Test
  void aJoinWithASmallLimitStillBalancesInChainedRounds() {
    Simulation sim = cluster(30, new RebalanceLimits(2, 1.0));
    sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    int saves = sim.store.saves;
    sim.join("1.0");
    // Less than the periodic interval (2 s), and no round fails (no retry): rounds chain.
    sim.vt.advance(Duration.ofMillis(1500));
    assertThat(sim.installed().ownedCounts().values()).containsExactlyInAnyOrder(15, 15);
    assertThat(sim.store.saves - saves).as("the registration, then one save per round of two moves")
        .isEqualTo(1 + 8);
  }

  /**
   * Space settings: the default space, limited to one owned shard per round, moves one shard in
   * each of its rounds, while the worker space (the global limit of 10) moves its share in one.
   */
  @Test
  void eachSpaceMovesWithinItsOwnLimitInTheSameRebalance() {
    Simulation sim = new Simulation(42, Simulation.settings(Spaces.parse("default=12,worker=12"),
        new RebalanceLimits(10, 1.0), AllocationStrategy.versionAware())
        .withSpaceSettings(Map.of("", SpaceSettings.maxMoves(1))), false, 0);
    sim.faults = false;
    SimPod web1 = sim.join("1.0", List.of(""));
    SimPod worker1 = sim.join("1.0", List.of("worker"));
    sim.vt.advance(Duration.ofSeconds(2));
    assertThat(sim.installed().ownedCounts()).containsEntry(web1.id(), 12).containsEntry(worker1.id(), 12);
    sim.join("1.0", List.of(""));
    sim.join("1.0", List.of("worker"));
    List<int[]> changes = new ArrayList<>(); // per installed config: owners changed in {default, worker}
    ClusterConfig before = sim.installed();
    for (int ms = 0; ms < 1800; ms++) {
      sim.vt.advance(Duration.ofMillis(1));
      ClusterConfig now = sim.installed();
      if (now.epoch() != before.epoch()) {
        int[] moved = new int[2];
        for (int pos = 0; pos < 24; pos++) {
          if (before.owner(pos) != null && !before.owner(pos).equals(now.owner(pos))) {
            moved[pos < 12 ? 0 : 1]++;
          }
        }
        changes.add(moved);
        before = now;
      }
    }
    assertThat(changes).as("every round moves at most one default shard").allMatch(m -> m[0] <= 1);
    assertThat(changes).as("the worker space moves its six in one round").anyMatch(m -> m[1] == 6);
    assertThat(sim.installed().ownedCounts().values()).containsExactlyInAnyOrder(6, 6, 6, 6);
  }

  @Test
  void aCrashedPodIsDeclaredDeadWithinLeaseMarginAndOneTick() {
    Simulation sim = cluster(4, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    SimPod b = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    long lastRenewal = sim.now();
    sim.crash(b);
    // Its last renewal was granted at most a third of a lease ago; the check runs every 125 ms.
    sim.vt.advance(Simulation.TTL.plus(Simulation.MARGIN).plus(Duration.ofMillis(125 + 30)));
    assertThat(sim.installed().isActive(b.id())).isFalse();
    assertThat(sim.now() - lastRenewal).isLessThan(Duration.ofMillis(1400).toNanos());
    sim.vt.advance(Duration.ofMillis(300));
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 4);
  }

  @Test
  void aCrashedPodIsNotTakenForOneCutOffOnItsPortAndIsDeclaredDeadInTime() {
    Simulation sim = cluster(4, RebalanceLimits.UNLIMITED);
    sim.relayedUnassigns = true; // the manager pings the pods between rounds
    SimPod a = sim.join("1.0");
    SimPod b = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    sim.crash(b);
    // Its pings fail from the crash on, but it renews no more: left to its lease, no hand-off is
    // tried through renewals it will never send (that held the round up past its death).
    sim.vt.advance(Simulation.TTL.plus(Simulation.MARGIN).plus(Duration.ofMillis(125 + 30)));
    assertThat(sim.installed().isActive(b.id())).isFalse();
    sim.vt.advance(Duration.ofMillis(300));
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 4);
    assertThat(sim.relayedReleases).isZero();
  }

  @Test
  void aPodCutOffOnItsPortHandsItsShardsOverThroughItsRenewalsAndGetsShardsBackOnceReachable() {
    Simulation sim = cluster(4, RebalanceLimits.UNLIMITED);
    sim.relayedUnassigns = true;
    SimPod a = sim.join("1.0");
    SimPod b = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    assertThat(sim.installed().ownedCounts()).containsEntry(b.id(), 2);
    sim.cutOff(b, Duration.ofSeconds(6));
    sim.vt.advance(Simulation.TTL.multipliedBy(2)); // two pings, a renewal, the hand-off
    assertThat(sim.installed().isActive(b.id())).as("alive: it renews").isTrue();
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 4);
    assertThat(sim.relayedReleases).isPositive();
    for (int pos = 0; pos < 4; pos++) {
      assertThat(a.serving(pos, sim.now())).as("shard %s", pos + 1).isTrue();
    }
    sim.vt.advance(Duration.ofSeconds(6)); // reachable again: the periodic rebalance gives it shards
    sim.quietAndCheck();
  }

  @Test
  void aPodThatCrashesWhileCutOffIsLeftToItsLeaseWithoutHoldingTheRoundsUp() {
    // A termination timeout of 2 s: a hand-off's deadline (3.1 s with the lease) outlasts the lease.
    Simulation sim = new Simulation(42, Simulation.settings(4, RebalanceLimits.UNLIMITED,
        AllocationStrategy.versionAware()).withTimeouts(Duration.ofMillis(100), Duration.ofSeconds(2)), false, 0);
    sim.faults = false;
    sim.relayedUnassigns = true;
    SimPod a = sim.join("1.0");
    SimPod b = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(8));
    assertThat(sim.installed().ownedCounts()).containsEntry(b.id(), 2);
    sim.cutOff(b, Duration.ofSeconds(30));
    // Found cut off within two pings of a quarter lease each, once it renewed after the first;
    // it crashes the moment its hand-off waits for its next renewal.
    for (int i = 0; i < 3000 && sim.relay.size() == 0; i++) {
      sim.vt.advance(Duration.ofMillis(1));
    }
    assertThat(sim.relay.size()).as("a hand-off waits for its renewal").isEqualTo(1);
    long crashed = sim.now();
    sim.crash(b);
    // Declared dead a lease and the margin after its last renewal, and no round waits for a
    // renewal it will never send: its shards are with a at once.
    sim.vt.advance(Simulation.TTL.plus(Simulation.MARGIN).plus(Duration.ofMillis(125 + 30 + 300)));
    assertThat(sim.installed().isActive(b.id())).isFalse();
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 4);
    assertThat(sim.now() - crashed).isLessThan(Duration.ofMillis(1700).toNanos());
  }

  @Test
  void aRestartedManagerFinishesTheRebalanceItsPredecessorLeftHalfDone() {
    Simulation sim = cluster(30, new RebalanceLimits(2, 1.0));
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    int saves = sim.store.saves;
    SimPod b = sim.join("1.0");
    while (sim.store.saves < saves + 3) { // the registration and two rounds
      sim.vt.advance(Duration.ofMillis(1));
    }
    sim.crashManager();
    sim.startManager();
    sim.vt.advance(Duration.ofMillis(1800)); // the resume round after half a lease; periodic only at 2 s
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 15).containsEntry(b.id(), 15);
  }

  @Test
  void loopOnlyMethodsRefuseOtherThreads() {
    Simulation sim = cluster(2, RebalanceLimits.DEFAULT);
    ShardManager m = sim.manager;
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(1));
    org.assertj.core.api.Assertions.assertThatThrownBy(m::startServing).isInstanceOf(IllegalStateException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(m::recover).isInstanceOf(IllegalStateException.class);
    Membership membership = m.membershipForTest();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> membership.register(a.pod))
        .isInstanceOf(IllegalStateException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> membership.markGone(a.id(), "test"))
        .isInstanceOf(IllegalStateException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> membership.renew(a.id()))
        .isInstanceOf(IllegalStateException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(membership::findDeadPods)
        .isInstanceOf(IllegalStateException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> m.rebalancerForTest().request("test"))
        .isInstanceOf(IllegalStateException.class);
    assertThat(sim.installed().isActive(a.id())).as("nothing changed").isTrue();
    // The refused request left no round half started: the next one on the loop runs and ends.
    java.util.List<java.util.concurrent.CompletableFuture<ShardManager.RoundResult>> asked = new java.util.ArrayList<>();
    sim.loop.runAsLoop(() -> asked.add(m.rebalancerForTest().nextRound()));
    sim.vt.advance(Duration.ofSeconds(1));
    assertThat(asked.get(0)).isCompleted();
  }

  @Test
  void aClosedRebalancerFailsTheWaitersOfRoundsNotStartedAndMovesNothingMore() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    SimPod b = sim.join("1.0");
    untilNextSave(sim); // b's registration: its round starts now
    Rebalancer r = sim.manager.rebalancerForTest();
    java.util.List<java.util.concurrent.CompletableFuture<ShardManager.RoundResult>> waiting =
        new java.util.ArrayList<>();
    sim.loop.runAsLoop(() -> {
      waiting.add(r.nextRound());
      waiting.add(r.nextRound());
      r.close();
    });
    assertThat(waiting.get(1)).isCompletedExceptionally();
    org.assertj.core.api.Assertions.assertThatThrownBy(waiting.get(1)::join)
        .hasRootCauseInstanceOf(IllegalStateException.class).hasRootCauseMessage("shard manager is stopping");
    int saves = sim.store.saves;
    sim.vt.advance(Duration.ofSeconds(5)); // periodic rounds (2 s) and retries would run by now
    assertThat(sim.store.saves).as("no round saved anything").isEqualTo(saves);
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 10).containsEntry(b.id(), 0);
    assertThat(sim.log).as("closed during its pings: no pod was asked to release").noneMatch(l -> l.contains(" released "));
  }

  @Test
  void aRequestedRoundReportsWhatItMovedAndWhatTheLimitsLeftToMove() {
    Simulation sim = cluster(30, new RebalanceLimits(2, 1.0));
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    SimPod b = sim.join("1.0");
    untilNextSave(sim); // b's registration; rounds of two moves chain from here
    Rebalancer r = sim.manager.rebalancerForTest();
    java.util.List<java.util.concurrent.CompletableFuture<ShardManager.RoundResult>> asked = new java.util.ArrayList<>();
    sim.loop.runAsLoop(() -> asked.add(r.nextRound()));
    for (int i = 0; i < 5000 && !asked.get(0).isDone(); i++) {
      sim.vt.advance(Duration.ofMillis(1));
    }
    ShardManager.RoundResult result = asked.get(0).join();
    ClusterConfig c = sim.installed();
    assertThat(result.moved()).isEqualTo(2);
    assertThat(result.epoch()).isEqualTo(c.epoch());
    int onB = c.ownedCounts().getOrDefault(b.id(), 0);
    assertThat(result.remaining()).as("the moves still planned without limits").isPositive()
        .isLessThanOrEqualTo(15 - onB);
    assertThat(c.ownedCounts().get(a.id())).isEqualTo(30 - onB);
  }

  /**
   * Regression: a rebalancer closed while its round's unassigns were in flight still saved the
   * round's moves and pushed them when the replies came (only the ping step looked at close).
   */
  @Test
  void aRebalancerClosedWhileItsUnassignsAreInFlightSavesAndPushesNothing() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    SimPod b = sim.join("1.0");
    untilNextSave(sim); // b's registration: its round starts now
    for (int i = 0; i < 1000 && sim.log.stream().noneMatch(l -> l.contains(" released ")); i++) {
      sim.vt.advance(Duration.ofMillis(1));
    }
    assertThat(sim.log).as("the first pod got the unassign").anyMatch(l -> l.contains(" released "));
    int saves = sim.store.saves;
    ManagerObserverTest.Recording r = new ManagerObserverTest.Recording();
    sim.manager.observe(r);
    sim.loop.runAsLoop(sim.manager.rebalancerForTest()::close);
    sim.vt.advance(Duration.ofSeconds(5));
    assertThat(sim.store.saves).as("the round closed mid-way saved nothing").isEqualTo(saves);
    assertThat(r.finished).as("the round in progress still ended").isEqualTo(1);
    assertThat(r.started).as("and none began after it").isZero();
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 10).containsEntry(b.id(), 0);
    assertThat(b.view.ownedCounts()).as("nothing pushed to the target").containsEntry(b.id(), 0);
  }

  @Test
  void aRoundWhoseUnassignFailedIsRetriedAfterTheRetryIntervalNotAtOnce() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    sim.unassignsLost = a.id()::equals; // its pings answer; its unassigns time out (200 ms)
    ManagerObserverTest.Recording r = new ManagerObserverTest.Recording();
    sim.manager.observe(r);
    SimPod b = sim.join("1.0");
    untilNextSave(sim); // b's registration: the first round starts
    sim.vt.advance(Duration.ofMillis(1500));
    // Each round waits 200 ms for the unassign, then 300 ms before the retry: at most 4 rounds
    // (one more if the periodic round falls in), where retrying at once would run 7.
    assertThat(r.started).isBetween(2, 4);
    assertThat(r.moved).isZero();
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 10).containsEntry(b.id(), 0);
    sim.unassignsLost = p -> false;
    sim.vt.advance(Duration.ofSeconds(1));
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 5).containsEntry(b.id(), 5);
  }

  @Test
  void aPingThatFailsWithAnErrorCountsAsUnansweredAndTheRoundsGoOn() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    sim.pingsThrow = p -> true;
    SimPod b = sim.join("1.0");
    untilNextSave(sim);
    sim.vt.advance(Duration.ofMillis(500));
    assertThat(sim.installed().ownedCounts()).as("no move without an answered ping").containsEntry(a.id(), 10);
    sim.pingsThrow = p -> false;
    sim.vt.advance(Duration.ofSeconds(1)); // the retry round (300 ms), not only the periodic one (2 s)
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 5).containsEntry(b.id(), 5);
  }

  @Test
  void aQuietBalancedClusterStillGetsAPeriodicRoundEveryInterval() {
    Simulation sim = cluster(4, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    SimPod b = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(3));
    ManagerObserverTest.Recording r = new ManagerObserverTest.Recording();
    sim.manager.observe(r);
    sim.vt.advance(Duration.ofMillis(10_100)); // the interval is 2 s
    assertThat(r.started).isBetween(5, 6);
    assertThat(r.moved).isZero();
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 2).containsEntry(b.id(), 2);
  }

  @Test
  void theCallsNameTheShardCountAndADrainMovesThePodsShardsAway() {
    Simulation sim = cluster(6, RebalanceLimits.UNLIMITED);
    assertThat(sim.manager.calls().numberOfShards()).isEqualTo(6);
    SimPod a = sim.join("1.0");
    SimPod b = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(3));
    java.util.concurrent.CompletableFuture<Void> drained = sim.manager.calls().drain(a.id());
    sim.vt.advance(Duration.ofSeconds(1));
    assertThat(drained).isCompleted();
    assertThat(drained.join()).isNull();
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 0).containsEntry(b.id(), 6);
  }
}
