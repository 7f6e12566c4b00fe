package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.StoreException;
import io.atoll.manager.round.Rounds;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * A layout grown at run time: a pod of a role without a space registers and the manager appends
 * one for it, saved with the pod's entry, placed on that role's pods only, moving nothing in any
 * other space, and kept across a restart with the first layout.
 */
class GrownSpacesTest {

  static final Pod WORKER = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1"),
      List.of("worker"));
  static final Pod BATCH = new Pod(new PodId(new PodAddress("127.0.0.1", 7002), 2), PodVersion.of("1"),
      List.of("batch"));

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();

  Journal journal(Spaces spaces) {
    return new Journal(store, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt, spaces, c -> {},
        e -> {}, Duration.ofSeconds(1), Duration.ofMillis(200), Journal.MAX_TOMBSTONES, Journal.MAX_PRUNED);
  }

  Membership membership(Journal j, int newSpaceShards) {
    return new Membership(j, new Leases(Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofHours(1)),
        p -> io.atoll.core.spi.PodHealth.Verdict.UNKNOWN, loop, vt.executor(0, () -> true), vt, r -> {},
        newSpaceShards);
  }

  ClusterConfig register(Membership m, Pod pod) {
    CompletableFuture<ClusterConfig> f = loop.callAsLoop(() -> m.register(pod));
    vt.advance(Duration.ofMillis(10));
    return f.join();
  }

  @Test
  void aPodOfANewRoleGetsASpaceAppendedAndSavedWithItsEntry() {
    Journal j = journal(Spaces.parse("default=4"));
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    ClusterConfig c = register(membership(j, 3), WORKER);
    assertThat(c.spaces()).isEqualTo(Spaces.parse("default=4,worker=3"));
    assertThat(c.isActive(WORKER.id())).isTrue();
    ManagerState saved = ManagerState.decode(store.load().orElseThrow().data());
    assertThat(saved.config()).isEqualTo(c);
    for (int pos = 4; pos < 7; pos++) {
      assertThat(c.claim(pos)).isEqualTo(Claim.NONE); // placed by the next round, not here
    }
  }

  @Test
  void withNoNewSpaceShardsThePodIsAcceptedAndTheLayoutStays() {
    Journal j = journal(Spaces.parse("default=4"));
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    ClusterConfig c = register(membership(j, 0), WORKER);
    assertThat(c.spaces()).isEqualTo(Spaces.parse("default=4"));
    assertThat(c.isActive(WORKER.id())).isTrue();
  }

  @Test
  void aSpaceBeyondTheBoundsIsRefusedNamingTheRoleAndTheBoundAndNothingIsSaved() {
    Journal j = journal(Spaces.parse("default=" + (ManagerSettings.MAX_SHARDS - 50)));
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    long version = store.version();
    CompletableFuture<ClusterConfig> f = loop.callAsLoop(() -> membership(j, 100).register(WORKER));
    vt.advance(Duration.ofMillis(10));
    assertThatThrownBy(f::join).hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("space 'worker'").hasMessageContaining("at most " + ManagerSettings.MAX_SHARDS);
    assertThat(store.version()).isEqualTo(version);
    assertThat(loop.callAsLoop(j::config).pod(WORKER.id())).isEmpty();
  }

  @Test
  void growIsRefusedPastTheMostSpacesAndAppendsInTheOrderGiven() {
    java.util.Map<String, Integer> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < Spaces.MAX_SPACES; i++) {
      m.put(i == 0 ? "" : "r" + i, 1);
    }
    ClusterConfig full = ClusterConfig.empty(Spaces.of(m));
    assertThatThrownBy(() -> Rounds.grow(full, List.of("x"), 1, ManagerSettings.MAX_SHARDS))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("space 'x'")
        .hasMessageContaining("at most " + Spaces.MAX_SPACES);
    ClusterConfig two = Rounds.grow(ClusterConfig.empty(2), List.of("b", "", "a"), 5, ManagerSettings.MAX_SHARDS);
    assertThat(two.spaces()).isEqualTo(Spaces.parse("default=2,b=5,a=5"));
  }

  @Test
  void aRestartWithTheFirstSpacesKeepsTheGrownLayoutAndItsClaims() {
    Journal first = journal(Spaces.parse("default=4"));
    loop.callAsLoop(() -> first.recover(UnaryOperator.identity()));
    register(membership(first, 3), WORKER);
    CompletableFuture<ClusterConfig> placed = loop.callAsLoop(() -> first.transition(c -> c.toBuilder()
        .claim(5, Claim.stable(WORKER.id(), c.epoch() + 1)).build()));
    vt.advance(Duration.ofMillis(10));
    placed.join();
    vt.advance(Duration.ofSeconds(2));
    Journal second = journal(Spaces.parse("default=4"));
    ClusterConfig c = loop.callAsLoop(() -> second.recover(Rounds::reassert));
    assertThat(c.spaces()).isEqualTo(Spaces.parse("default=4,worker=3"));
    assertThat(c.activeOwner(5)).isEqualTo(WORKER.id());
  }

  @Test
  void aRestartWithSpacesAppendedToTheStoredOnesGrowsTheLayout() {
    Journal first = journal(Spaces.parse("default=4"));
    loop.callAsLoop(() -> first.recover(UnaryOperator.identity()));
    vt.advance(Duration.ofSeconds(2));
    Journal second = journal(Spaces.parse("default=4,worker=2"));
    ClusterConfig c = loop.callAsLoop(() -> second.recover(UnaryOperator.identity()));
    assertThat(c.spaces()).isEqualTo(Spaces.parse("default=4,worker=2"));
    assertThat(ManagerState.decode(store.load().orElseThrow().data()).config().spaces()).isEqualTo(c.spaces());
  }

  @Test
  void aRestartWithALayoutThatNeitherExtendsIsRefusedNamingBoth() {
    Journal first = journal(Spaces.parse("default=4"));
    loop.callAsLoop(() -> first.recover(UnaryOperator.identity()));
    register(membership(first, 3), WORKER);
    vt.advance(Duration.ofSeconds(2));
    Journal second = journal(Spaces.parse("default=4,worker=5"));
    assertThatThrownBy(() -> loop.callAsLoop(() -> second.recover(UnaryOperator.identity())))
        .isInstanceOf(StoreException.class).hasMessageContaining("default=4,worker=3")
        .hasMessageContaining("default=4,worker=5");
  }

  @Test
  void unhostedNamesEachSpaceNoActivePodHosts() {
    ClusterConfig c = Rounds.join(ClusterConfig.empty(Spaces.parse("default=2,worker=2,batch=1")), WORKER);
    assertThat(Rounds.unhosted(c)).extracting(Space::role).containsExactly("", "batch");
  }

  /**
   * The real manager on virtual time: two spaces settled over their pods, then a pod of a third
   * role joins; every claim of the first two spaces stays as it was at every 50 ms, the new space
   * ends on the new pod alone, and a manager restarted with the first layout keeps all three.
   */
  @Test
  void aNewRoleJoiningARunningClusterMovesNothingElseAndSurvivesARestart() {
    Spaces layout = Spaces.parse("default=6,worker=4");
    Simulation sim = new Simulation(7L, Simulation.settings(layout, RebalanceLimits.DEFAULT,
        AllocationStrategy.versionAware()).withNewSpaceShards(5), true, 0.0);
    sim.faults = false;
    sim.join("1.0", List.of(""));
    sim.join("1.0", List.of(""));
    sim.join("1.0", List.of("worker"));
    sim.quietAndCheck();
    ClusterConfig settled = sim.installed();
    SimPod batch = sim.joinNewRole();
    for (int ms = 0; ms < 5000; ms += 50) {
      sim.vt.advance(Duration.ofMillis(50));
      ClusterConfig now = sim.installed();
      for (int pos = 0; pos < settled.size(); pos++) {
        assertThat(now.claim(pos)).as("shard %d", pos + 1).isEqualTo(settled.claim(pos));
      }
    }
    sim.quietAndCheck();
    ClusterConfig grown = sim.installed();
    Space added = grown.spaces().list().get(2);
    assertThat(grown.spaces().list()).hasSize(3);
    assertThat(added.count()).isEqualTo(5);
    for (int pos = added.first(); pos < added.first() + added.count(); pos++) {
      assertThat(grown.activeOwner(pos)).isEqualTo(batch.id());
    }
    sim.crashManager();
    sim.startManager();
    sim.quietAndCheck();
    assertThat(sim.installed().spaces()).isEqualTo(grown.spaces());
    assertThat(sim.installed().activeOwner(added.first())).isEqualTo(batch.id());
  }
}
