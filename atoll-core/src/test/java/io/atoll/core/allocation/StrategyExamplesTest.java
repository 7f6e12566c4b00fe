package io.atoll.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Both strategies on small clusters worked out by hand: which shards move, from where, to where,
 * in what order, and where the limits stop them. The properties check what holds for every
 * cluster; these pin the decisions themselves.
 */
class StrategyExamplesTest {

  private static final Pod A = pod(1);
  private static final Pod B = pod(2);
  private static final Pod C = pod(3);
  private static final Pod D = pod(4);
  private static final RebalanceLimits ONE = new RebalanceLimits(1, 1.0);
  private static final RebalanceLimits TWO = new RebalanceLimits(2, 1.0);

  private static Pod pod(int i) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 7000 + i), i), PodVersion.of("1.0"));
  }

  /** A config of {@code owners.length} shards: shard {@code s} belongs to {@code owners[s - 1]}, or none. */
  private static ClusterConfig config(Pod... owners) {
    ClusterConfig.Builder b = ClusterConfig.empty(owners.length).toBuilder();
    for (Pod p : List.of(A, B, C, D)) {
      b.pod(new PodEntry(p, PodStatus.ACTIVE, 1));
    }
    for (int s = 0; s < owners.length; s++) {
      if (owners[s] != null) {
        b.claim(s, Claim.stable(owners[s].id(), 1));
      }
    }
    return b.build();
  }

  private static Pod[] owned(Object... podAndCount) {
    List<Pod> out = new ArrayList<>();
    for (int i = 0; i < podAndCount.length; i += 2) {
      for (int k = 0; k < (Integer) podAndCount[i + 1]; k++) {
        out.add((Pod) podAndCount[i]);
      }
    }
    return out.toArray(new Pod[0]);
  }

  private static List<String> moves(List<Move> moves) {
    return moves.stream().map(m -> m.shard() + ":" + (m.from() == null ? "-" : name(m.from())) + ">" + name(m.to()))
        .toList();
  }

  private static List<String> fromTo(List<Move> moves) {
    return moves.stream().map(m -> (m.from() == null ? "-" : name(m.from())) + ">" + name(m.to())).toList();
  }

  private static String name(PodId id) {
    return String.valueOf((char) ('A' + id.incarnation() - 1));
  }

  private static final AllocationStrategy VERSION_AWARE = AllocationStrategy.versionAware();
  private static final AllocationStrategy LEAST_SHARD = AllocationStrategy.leastShard();

  // ---- version-aware (seed 001) ----

  @Test
  void versionAwareMovesShardsOfTheMostLoadedPodFirst() {
    // B owns shards 1-4, A shards 5-10, C none. Both are above the average (3.33), so both give
    // up shards; A's come first because A holds more, although B's shard ids are lower.
    ClusterConfig c = config(owned(B, 4, A, 6));
    List<Move> m = VERSION_AWARE.decide(c, List.of(A, B, C), ONE, new Random(1));
    assertThat(fromTo(m)).containsExactly("A>C");
    assertThat(m.get(0).shard()).isBetween(5, 10);
  }

  @Test
  void versionAwareMovesOnePodsShardsInShardOrder() {
    for (int seed = 0; seed < 10; seed++) {
      List<Move> m = VERSION_AWARE.decide(config(owned(A, 6)), List.of(A, B), RebalanceLimits.UNLIMITED,
          new Random(seed));
      assertThat(fromTo(m)).containsExactly("A>B", "A>B", "A>B");
      assertThat(m.get(0).shard()).isLessThan(m.get(1).shard());
      assertThat(m.get(1).shard()).isLessThan(m.get(2).shard());
    }
  }

  @Test
  void versionAwarePicksAnyShardOfAnOverloadedPod() {
    // A holds 3 of 4 (average 2): one of A's three, chosen at random, moves to B.
    Set<Integer> moved = new TreeSet<>();
    Random seeds = new Random(42); // seeds 0, 1, 2, ... would start correlated sequences
    for (int round = 0; round < 100; round++) {
      long seed = seeds.nextLong();
      List<Move> m = VERSION_AWARE.decide(config(owned(A, 3, B, 1)), List.of(A, B), RebalanceLimits.UNLIMITED,
          new Random(seed));
      assertThat(fromTo(m)).containsExactly("A>B");
      moved.add(m.get(0).shard());
    }
    assertThat(moved).containsExactly(1, 2, 3);
  }

  @Test
  void versionAwareStopsOwnedMovesAtTheLimitButPlacesEveryUnownedShard() {
    assertThat(VERSION_AWARE.decide(config(owned(A, 6)), List.of(A, B), TWO, new Random(1))).hasSize(2);
    assertThat(VERSION_AWARE.decide(config(owned(A, 6)), List.of(A, B), ONE, new Random(1))).hasSize(1);
    List<Move> m = VERSION_AWARE.decide(config(null, null, null, A), List.of(A, B), ONE, new Random(1));
    assertThat(moves(m)).containsExactly("1:->B", "2:->A", "3:->B");
  }

  @Test
  void versionAwareSkipsAMoveThatWouldLeaveTheGapAtOne() {
    // A holds 3, B and C 1, D none (average 1.25): A gives up two. The first goes to D; then A
    // holds 2 and the least loaded (B) 1: not worth a move.
    List<Move> m = VERSION_AWARE.decide(config(owned(A, 3, B, 1, C, 1)), List.of(A, B, C, D),
        RebalanceLimits.UNLIMITED, new Random(1));
    assertThat(fromTo(m)).containsExactly("A>D");
    assertThat(m.get(0).from()).isEqualTo(A.id());
    assertThat(m.get(0).isAllocation()).isFalse();
  }

  @Test
  void tiesGoToTheLowestPodIdWhateverTheOrderOfTheList() {
    for (AllocationStrategy s : List.of(VERSION_AWARE, LEAST_SHARD)) {
      List<Move> m = s.decide(config(null, null, null), List.of(C, B, A), RebalanceLimits.UNLIMITED, new Random(1));
      assertThat(moves(m)).containsExactly("1:->A", "2:->B", "3:->C");
      assertThat(m.get(0).isAllocation()).isTrue();
    }
  }

  // ---- least-shard ----

  @Test
  void leastShardPhaseOneGivesUpEverythingAboveTheCeiling() {
    // 11 shards on 3 pods: ceiling 4. A gives up 5; each goes to the least loaded.
    List<Move> m = LEAST_SHARD.decide(config(owned(A, 9, B, 2)), List.of(A, B, C), RebalanceLimits.UNLIMITED,
        new Random(1));
    assertThat(fromTo(m)).containsExactly("A>C", "A>C", "A>B", "A>C", "A>B");
  }

  @Test
  void leastShardTakesOnlyFromPodsAboveTheCeiling() {
    // 8 shards on 3 pods: ceiling 3. Only B (5) is above; A (3, the lowest id) keeps its shards.
    List<Move> m = LEAST_SHARD.decide(config(owned(A, 3, B, 5)), List.of(A, B, C), RebalanceLimits.UNLIMITED,
        new Random(1));
    assertThat(fromTo(m)).containsExactly("B>C", "B>C");
  }

  @Test
  void leastShardGivesToThePodWithTheLowestIdToo() {
    List<Move> m = LEAST_SHARD.decide(config(owned(B, 4, C, 4)), List.of(A, B, C), RebalanceLimits.UNLIMITED,
        new Random(1));
    assertThat(fromTo(m)).containsExactly("B>A", "C>A");
  }

  @Test
  void leastShardPhaseTwoFillsAPodBelowTheFloorFromOneAtTheCeiling() {
    // 10 shards on 3 pods: ceiling 4, floor 3. Nobody is above 4, C is below 3: A gives one.
    List<Move> m = LEAST_SHARD.decide(config(owned(A, 4, B, 4, C, 2)), List.of(A, B, C), RebalanceLimits.UNLIMITED,
        new Random(1));
    assertThat(fromTo(m)).containsExactly("A>C");
  }

  @Test
  void leastShardStopsAtTheLimit() {
    List<Move> m = LEAST_SHARD.decide(config(owned(A, 9, B, 2)), List.of(A, B, C), TWO, new Random(1));
    assertThat(fromTo(m)).containsExactly("A>C", "A>C");
  }

  @Test
  void leastShardPicksAnyShardOfAnOverloadedPod() {
    Set<Integer> moved = new TreeSet<>();
    Random seeds = new Random(42); // seeds 0, 1, 2, ... would start correlated sequences
    for (int round = 0; round < 100; round++) {
      long seed = seeds.nextLong();
      List<Move> m = LEAST_SHARD.decide(config(owned(A, 4, B, 2)), List.of(A, B), RebalanceLimits.UNLIMITED,
          new Random(seed));
      assertThat(fromTo(m)).containsExactly("A>B");
      moved.add(m.get(0).shard());
    }
    assertThat(moved).containsExactly(1, 2, 3, 4);
  }

  // ---- limits and applying moves ----

  @Test
  void limitsAllowTheFewerOfAbsoluteAndRelativeButAtLeastOne() {
    assertThat(RebalanceLimits.DEFAULT.movesPerRound(300)).isEqualTo(20);
    assertThat(RebalanceLimits.DEFAULT.movesPerRound(100)).isEqualTo(10);
    assertThat(RebalanceLimits.DEFAULT.movesPerRound(5)).isEqualTo(1);
  }

  @Test
  void applyingRefusesAShardMovedTwiceAndAnEpochThatIsNotNewer() {
    ClusterConfig c = config(owned(A, 3));
    assertThatThrownBy(() -> Allocations.apply(c, List.of(new Move(3, A.id(), B.id()), new Move(3, A.id(), C.id())), 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("move: shard 3 moved twice in one round");
    assertThatThrownBy(() -> Allocations.apply(c, List.of(new Move(2, A.id(), B.id())), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("move of shard 2: epoch 1 (expected: > 1)");
    assertThat(Allocations.apply(c, List.of(new Move(2, A.id(), B.id())), 2).owner(1)).isEqualTo(B.id());
  }
}
