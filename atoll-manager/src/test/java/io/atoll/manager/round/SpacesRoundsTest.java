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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A round over two shard spaces: each space's shards go only to the pods hosting its role. */
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
}
