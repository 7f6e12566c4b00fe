package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.PodHealth;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.manager.round.Rounds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenarios that once broke the manager's safety or liveness, each named after what broke. The
 * cluster scenarios run the real manager in the simulation (virtual clock, pods that hold their
 * own leases); the simulation checks after every task that no shard can be served by two pods.
 */
class ManagerSafetyTest {

  static Simulation quietCluster(int pods) {
    Simulation sim = new Simulation(7, Simulation.settings(6, RebalanceLimits.UNLIMITED,
        AllocationStrategy.versionAware()), false, 0.0);
    sim.faults = false;
    for (int i = 0; i < pods; i++) {
      sim.join("1.0");
    }
    sim.vt.advance(Duration.ofSeconds(5));
    return sim;
  }

  @Test
  void aManagerRestartedWithAShorterLeaseWaitsOutTheLongerLeasesPodsStillHold() {
    Simulation sim = quietCluster(0);
    sim.crashManager();
    sim.startManager(Duration.ofMillis(2500));
    List<SimPod> pods = List.of(sim.join("1.0"), sim.join("1.0"), sim.join("1.0"));
    sim.vt.advance(Duration.ofSeconds(6));
    assertThat(sim.installed().unownedCount()).isZero();
    sim.crashManager();
    sim.startManager(Duration.ofMillis(400));
    SimPod silent = pods.get(0);
    sim.partition(silent, Duration.ofSeconds(20)); // it holds a 2.5 s lease and renews no more
    // The new manager must not give the silent pod's shards away while its old lease may still
    // run: the simulation fails the moment two pods could serve one shard.
    sim.vt.advance(Duration.ofSeconds(8));
    ClusterConfig c = sim.installed();
    assertThat(c.pod(silent.id()).orElseThrow().status()).isEqualTo(PodStatus.GONE);
    assertThat(c.unownedCount()).isZero();
    for (int pos = 0; pos < c.size(); pos++) {
      assertThat(c.owner(pos)).isNotEqualTo(silent.id());
    }
    assertThat(pods.get(1).ttlNanos).as("renewing pods now hold the new lease")
        .isEqualTo(Duration.ofMillis(400).toNanos());
  }

  @Test
  void aPausedManagerDeclaresNoHealthyPodDead() {
    Simulation sim = quietCluster(3);
    Set<PodId> before = sim.installed().activePods().stream().map(Pod::id).collect(Collectors.toSet());
    assertThat(before).hasSize(3);
    sim.pauseManager(Duration.ofSeconds(8)); // eight leases: SIGSTOP, then SIGCONT
    sim.vt.advance(Duration.ofSeconds(12));
    ClusterConfig after = sim.installed();
    assertThat(after.activePods().stream().map(Pod::id).collect(Collectors.toSet()))
        .as("the same pods, none declared dead and rejoined").isEqualTo(before);
    assertThat(sim.pods).hasSize(3);
    assertThat(after.unownedCount()).isZero();
    sim.quietAndCheck();
  }

  @Test
  void aPausedManagerStillFindsAReallyDeadPodOneLeaseAfterItResumes() {
    Simulation sim = quietCluster(2);
    SimPod dead = sim.alive().get(0);
    sim.crash(dead);
    sim.pauseManager(Duration.ofSeconds(8));
    sim.vt.advance(Duration.ofSeconds(8));
    sim.vt.advance(Duration.ofMillis(10));
    assertThat(sim.installed().isActive(dead.id())).as("the pause is not charged to the dead pod").isTrue();
    sim.vt.advance(Duration.ofMillis(1500));
    assertThat(sim.installed().isActive(dead.id())).isFalse();
  }

  @Test
  void aPausedManagerGrantsNothingUntilItRenewedItsStoreLease() {
    Simulation sim = quietCluster(2);
    sim.pauseManager(Duration.ofSeconds(3)); // three store leases: a standby could lead by now
    sim.vt.advance(Duration.ofSeconds(3));
    sim.managerStore.cut(true); // the renewal after the pause cannot reach the store
    sim.vt.advance(Duration.ofMillis(500));
    for (SimPod p : sim.alive()) {
      assertThat(p.leaseUntil).as("no renewal granted after the pause: %s", p.describe(sim.now()))
          .isLessThan(sim.now());
    }
    sim.managerStore.cut(false);
    sim.vt.advance(Duration.ofMillis(800));
    for (SimPod p : sim.alive()) {
      assertThat(p.leaseUntil).as("granted again once the store lease is renewed").isGreaterThan(sim.now());
    }
  }

  @Test
  void aLeaderCutOffFromItsStoreStopsGrantingBeforeAStandbyCanMoveItsPodsShards() {
    // The leader loses its store but still reaches pod A; a standby takes the store lease the
    // moment it lapses, cannot reach A, and after a lease and margin declares it dead and gives
    // its shards to the others. The simulation fails the moment A and another pod could both
    // serve one shard: A must have lost its lease by then, so the old leader must have stopped
    // renewing it a store lease after its last successful store renewal was sent.
    Simulation sim = quietCluster(3);
    SimPod a = sim.alive().get(0);
    ClusterConfig before = sim.installed();
    int aShards = before.ownedCounts().getOrDefault(a.id(), 0);
    assertThat(aShards).isPositive();
    sim.cutManagerFromStore();
    sim.vt.advance(sim.running.storeLease()); // the earliest a store grants the lease to another
    sim.standbyTakesOver(List.of(a));
    sim.vt.advance(Duration.ofSeconds(10));
    ClusterConfig after = sim.installed();
    assertThat(after.isActive(a.id())).as("the new leader declared the pod it cannot reach dead").isFalse();
    assertThat(after.unownedCount()).isZero();
    assertThat(a.leaseUntil).as("the old leader stopped renewing A").isLessThan(sim.now());
  }

  @Test
  void aLeaderCutOffFromItsStoreResumesGrantingWhenTheStoreAnswersAgainUnderItsTerm() {
    Simulation sim = quietCluster(2);
    long term = sim.manager.term();
    sim.cutManagerFromStore();
    sim.vt.advance(Duration.ofSeconds(3));
    sim.managerStore.cut(false);
    sim.vt.advance(Duration.ofSeconds(2));
    assertThat(sim.manager.term()).isEqualTo(term);
    for (SimPod p : sim.alive()) {
      assertThat(p.leaseUntil).as("renewed again: %s", p.describe(sim.now())).isGreaterThan(sim.now());
    }
    sim.quietAndCheck();
  }

  // ------------------------------------------------------------------------------------------
  // Tombstones

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();

  static Pod pod(int i) {
    return new Pod(new PodId(new PodAddress("10.0." + (i >> 8 & 255) + "." + (i & 255), 7000), i),
        PodVersion.of("1"));
  }

  @Test
  void seventyThousandRegisterAndDieCyclesKeepRegisterWorking() {
    // Small caps so that the test is quick; the rule is the same at the defaults.
    Journal journal = new Journal(store, vt.executor(0, () -> true), loop, vt, 2, c -> {}, e -> {},
        Duration.ofSeconds(1), Duration.ofMillis(200), 64, 1024);
    Membership m = new Membership(journal, new Leases(Duration.ofSeconds(1), Duration.ofMillis(200),
        Duration.ofHours(1)), PodHealth.LEASE_ONLY, loop, vt.executor(0, () -> true), vt, r -> {});
    loop.callAsLoop(() -> journal.recover(Rounds::reassert));
    Pod survivor = pod(0);
    loop.callAsLoop(() -> m.register(survivor));
    vt.advance(Duration.ZERO);
    for (int i = 1; i <= 70_000; i++) {
      Pod p = pod(i);
      CompletableFuture<ClusterConfig> joined = loop.callAsLoop(() -> m.register(p));
      vt.advance(Duration.ZERO);
      assertThat(joined).as("register #%d", i).isCompleted();
      assertThat(joined.join().isActive(p.id())).isTrue();
      CompletableFuture<ClusterConfig> left = loop.callAsLoop(() -> m.markGone(p.id(), "died"));
      vt.advance(Duration.ZERO);
      assertThat(left.join().isActive(p.id())).isFalse();
    }
    ClusterConfig c = loop.callAsLoop(journal::config);
    assertThat(c.pods().size()).isLessThanOrEqualTo(64 + 1);
    assertThat(c.isActive(survivor.id())).isTrue();
    // A pruned pod cannot come back as the same incarnation, whether remembered as a tombstone
    // or as a pruned id; an id forgotten long ago is harmless (see docs/architecture.md).
    Pod recent = pod(70_000 - 100);
    assertThat(c.pod(recent.id())).isEmpty();
    assertThat(loop.callAsLoop(() -> m.register(recent))).isCompletedExceptionally();
    Pod tombstone = pod(70_000);
    assertThat(c.pod(tombstone.id()).orElseThrow().status()).isEqualTo(PodStatus.GONE);
    assertThat(loop.callAsLoop(() -> m.register(tombstone))).isCompletedExceptionally();
    // Restarts keep it all.
    Journal next = new Journal(store, vt.executor(0, () -> true), loop, vt, 2, cfg -> {}, e -> {},
        Duration.ofSeconds(1), Duration.ofMillis(200), 64, 1024);
    loop.callAsLoop(() -> next.recover(Rounds::reassert));
    assertThat(loop.callAsLoop(() -> next.wasPruned(recent.id()))).isTrue();
    assertThat(store.load().orElseThrow().data().length).isLessThan(64 * 1024);
  }

  @Test
  void pruningNeverLowersTheEpochNorDropsANamedTombstone() {
    ClusterConfig c = ClusterConfig.empty(2);
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      pods.add(pod(i));
      c = Rounds.join(c, pods.get(i));
    }
    c = c.toBuilder().claim(0, io.atoll.core.Claim.stable(pods.get(0).id(), c.epoch() + 1)).build();
    for (Pod p : pods) {
      c = Rounds.leave(c, p.id());
    }
    Rounds.Pruned pruned = Rounds.pruneTombstones(c, 1);
    assertThat(pruned.config().epoch()).isEqualTo(c.epoch());
    assertThat(pruned.config().pod(pods.get(0).id())).as("named by a claim").isPresent();
    assertThat(pruned.config().pod(pods.get(4).id())).as("carries the config's epoch").isPresent();
    assertThat(pruned.pruned()).containsExactly(pods.get(1).id(), pods.get(2).id(), pods.get(3).id());
    assertThat(Rounds.pruneTombstones(pruned.config(), 1).pruned()).isEmpty();
  }

  // ------------------------------------------------------------------------------------------
  // The promised lease across restarts, over a real file store

  @Test
  void theLeaseAManagerPromisedSurvivesARestartOnAFileStore(@TempDir Path dir) {
    Duration margin = Duration.ofMillis(200);
    try (FileAssignmentStore s = FileAssignmentStore.open(dir)) {
      Journal first = new Journal(s, Runnable::run, loop, vt, 2, c -> {}, e -> {}, Duration.ofSeconds(30), margin,
          Journal.MAX_TOMBSTONES, Journal.MAX_PRUNED);
      loop.callAsLoop(() -> first.recover(UnaryOperator.identity()));
      assertThat(first.promisedLimitNanos()).isEqualTo(Duration.ofMillis(30_200).toNanos());
    }
    try (FileAssignmentStore s = FileAssignmentStore.open(dir)) {
      ManagerState stored = ManagerState.decode(s.load().orElseThrow().data());
      assertThat(stored.leaseTtl()).isEqualTo(Duration.ofSeconds(30));
      Journal second = new Journal(s, Runnable::run, loop, vt, 2, c -> {}, e -> {}, Duration.ofSeconds(3), margin,
          Journal.MAX_TOMBSTONES, Journal.MAX_PRUNED);
      loop.callAsLoop(() -> second.recover(UnaryOperator.identity()));
      assertThat(second.promisedLimitNanos()).as("the longer lease an earlier term granted")
          .isEqualTo(Duration.ofMillis(30_200).toNanos());
      assertThat(ManagerState.decode(s.load().orElseThrow().data()).leaseTtl()).isEqualTo(Duration.ofSeconds(30));
      loop.callAsLoop(() -> {
        second.keepOwnPromise();
        return null;
      });
      loop.callAsLoop(() -> second.transition(c -> Rounds.join(c, pod(1))));
      vt.advance(Duration.ZERO);
      assertThat(ManagerState.decode(s.load().orElseThrow().data()).leaseTtl()).isEqualTo(Duration.ofSeconds(3));
    }
    try (FileAssignmentStore s = FileAssignmentStore.open(dir)) {
      Journal third = new Journal(s, Runnable::run, loop, vt, 2, c -> {}, e -> {}, Duration.ofSeconds(3), margin,
          Journal.MAX_TOMBSTONES, Journal.MAX_PRUNED);
      loop.callAsLoop(() -> third.recover(UnaryOperator.identity()));
      assertThat(third.promisedLimitNanos()).isEqualTo(Duration.ofMillis(3_200).toNanos());
    }
  }
}
