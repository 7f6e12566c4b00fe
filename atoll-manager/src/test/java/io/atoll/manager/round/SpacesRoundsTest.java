package io.atoll.manager.round;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.Spaces;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.allocation.SpaceAllocation;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A round over two shard spaces: each space's shards go only to the pods hosting its role, each
 * with its own limits and strategy.
 */
class SpacesRoundsTest {

  static final Spaces SPACES = Spaces.parse("default=6,worker=4");
  static final Pod WEB_1 = pod(1, "");
  static final Pod WEB_2 = pod(2, "");
  static final Pod WORKER = pod(3, "worker");

  static Pod pod(int i, String role) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 7000 + i), 1), PodVersion.of("1.0"), List.of(role));
  }

  static ClusterConfig joined(Pod... pods) {
    ClusterConfig c = ClusterConfig.empty(SPACES);
    for (Pod p : pods) {
      c = Rounds.join(c, p);
    }
    return c;
  }

  static ClusterConfig round(ClusterConfig c, Set<PodId> draining) {
    Plan plan = Rounds.plan(c, AllocationStrategy.versionAware(), RebalanceLimits.UNLIMITED, new Random(1), draining);
    Map<PodId, Optional<Set<Integer>>> released = Rounds.unassignments(plan.moves()).entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> Optional.of(Set.copyOf(e.getValue()))));
    return Rounds.apply(c, Rounds.settle(plan.moves(), released), c.epoch() + 1).config();
  }

  @Test
  void eachSpaceIsPlacedOnlyOnItsOwnPods() {
    ClusterConfig c = round(joined(WEB_1, WEB_2, WORKER), Set.of());
    assertThat(c.ownedCounts()).containsEntry(WEB_1.id(), 3).containsEntry(WEB_2.id(), 3).containsEntry(WORKER.id(), 4);
    for (int pos = 0; pos < 6; pos++) {
      assertThat(c.owner(pos)).isIn(WEB_1.id(), WEB_2.id());
    }
    for (int pos = 6; pos < 10; pos++) {
      assertThat(c.owner(pos)).isEqualTo(WORKER.id());
    }
    assertThat(c.pod(WORKER.id()).map(PodEntry::pod).orElseThrow().roles()).containsExactly("worker");
  }

  @Test
  void aSpaceWithoutHostsWaitsAndOthersAreUntouchedWhenItsFirstPodComes() {
    ClusterConfig c = round(joined(WEB_1, WEB_2), Set.of());
    assertThat(c.unownedCount()).isEqualTo(4);
    ClusterConfig before = Rounds.join(c, WORKER);
    Plan plan = Rounds.plan(before, AllocationStrategy.versionAware(), RebalanceLimits.UNLIMITED, new Random(1));
    assertThat(plan.moves()).extracting(Move::shard).containsExactlyInAnyOrder(7, 8, 9, 10);
    assertThat(plan.moves()).allMatch(m -> m.to().equals(WORKER.id()) && m.from() == null);
  }

  @Test
  void drainingAWebPodMovesItsShardsToTheOtherWebPodOnly() {
    ClusterConfig c = round(joined(WEB_1, WEB_2, WORKER), Set.of());
    ClusterConfig drained = round(c, Set.of(WEB_1.id()));
    assertThat(drained.ownedCounts()).containsEntry(WEB_1.id(), 0).containsEntry(WEB_2.id(), 6)
        .containsEntry(WORKER.id(), 4);
    for (int pos = 6; pos < 10; pos++) {
      assertThat(drained.claim(pos)).isEqualTo(c.claim(pos));
    }
  }

  @Test
  void aLeavingWorkerLeavesItsSpaceUnownedAndTheDefaultSpaceAsItWas() {
    ClusterConfig c = round(joined(WEB_1, WEB_2, WORKER), Set.of());
    ClusterConfig after = round(Rounds.leave(c, WORKER.id()), Set.of());
    for (int pos = 0; pos < 6; pos++) {
      assertThat(after.claim(pos)).isEqualTo(c.claim(pos));
    }
    for (int pos = 6; pos < 10; pos++) {
      assertThat(after.activeOwner(pos)).isNull();
    }
  }

  @Test
  void aSpaceWithALimitOfOneMovesOneShardWhileAnotherMovesMoreInTheSameRound() {
    Spaces layout = Spaces.parse("default=8,worker=8");
    Pod web2 = pod(4, "");
    Pod worker2 = pod(5, "worker");
    ClusterConfig c = ClusterConfig.empty(layout);
    c = Rounds.join(Rounds.join(c, WEB_1), WORKER);
    c = round(c, Set.of()); // every default shard on WEB_1, every worker shard on WORKER
    c = Rounds.join(Rounds.join(c, web2), worker2);
    Map<String, SpaceAllocation> own = Map.of(
        "", new SpaceAllocation(AllocationStrategy.versionAware(), new RebalanceLimits(1, 1.0)),
        "worker", new SpaceAllocation(AllocationStrategy.leastShard(), new RebalanceLimits(10, 1.0)));
    Plan plan = Rounds.plan(c, own::get, new Random(1), Set.of());
    assertThat(plan.moves()).filteredOn(m -> m.shard() <= 8).as("the default space, limit 1")
        .hasSize(1).allMatch(m -> m.from().equals(WEB_1.id()) && m.to().equals(web2.id()));
    assertThat(plan.moves()).filteredOn(m -> m.shard() > 8).as("the worker space, limit 10")
        .hasSize(4).allMatch(m -> m.from().equals(WORKER.id()) && m.to().equals(worker2.id()));
    Plan same = Rounds.plan(c, AllocationStrategy.versionAware(), new RebalanceLimits(1, 1.0), new Random(1), Set.of());
    assertThat(same.moves()).as("the same limit of 1 for both: one move in each").hasSize(2);
  }
}
