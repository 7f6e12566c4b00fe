package io.atoll.manager.round;

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
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The pure steps of a round: plain configs in, assertions on records out (as Shardcake tests its decide functions). */
class RoundsTest {

  static final Pod A = pod(1);
  static final Pod B = pod(2);
  static final Pod C = pod(3);

  static Pod pod(int i) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 7000 + i), 1), PodVersion.of("1.0"));
  }

  /** A config of {@code owners.length} shards; owners[k] owns shard k + 1 at epoch 1 (null: nobody). */
  static ClusterConfig config(List<Pod> active, List<Pod> gone, Pod... owners) {
    ClusterConfig.Builder b = ClusterConfig.empty(owners.length).toBuilder();
    active.forEach(p -> b.pod(new PodEntry(p, PodStatus.ACTIVE, 1)));
    gone.forEach(p -> b.pod(new PodEntry(p, PodStatus.GONE, 1)));
    for (int k = 0; k < owners.length; k++) {
      if (owners[k] != null) {
        b.claim(k, Claim.stable(owners[k].id(), 1));
      }
    }
    return b.build();
  }

  static Move move(int shard, Pod from, Pod to) {
    return new Move(shard, from == null ? null : from.id(), to.id());
  }

  // ---- plan

  @Test
  void planGivesEveryUnownedShardToTheOnlyPodAndInvolvesOnlyIt() {
    ClusterConfig c = config(List.of(A), List.of(), null, null, null);
    Plan p = Rounds.plan(c, AllocationStrategy.versionAware(), RebalanceLimits.DEFAULT, new Random(1));
    assertThat(p.moves()).containsExactly(move(1, null, A), move(2, null, A), move(3, null, A));
    assertThat(p.involved()).containsExactly(A.id());
    assertThat(p.isEmpty()).isFalse();
  }

  @Test
  void planInvolvesBothEndsOfAMoveAndIgnoresGonePods() {
    ClusterConfig c = config(List.of(A, B), List.of(C), A, A, A, A, C, C);
    Plan p = Rounds.plan(c, AllocationStrategy.versionAware(), RebalanceLimits.UNLIMITED, new Random(1));
    assertThat(p.involved()).containsExactly(A.id(), B.id());
    assertThat(p.moves()).allSatisfy(m -> assertThat(m.to()).isEqualTo(B.id()));
    assertThat(p.moves().stream().filter(m -> m.from() == null).map(Move::shard)).containsExactlyInAnyOrder(5, 6);
  }

  @Test
  void aBalancedClusterPlansNothing() {
    ClusterConfig c = config(List.of(A, B), List.of(), A, B, A, B);
    Plan p = Rounds.plan(c, AllocationStrategy.versionAware(), RebalanceLimits.DEFAULT, new Random(1));
    assertThat(p.isEmpty()).isTrue();
    assertThat(p.involved()).isEmpty();
  }

  @Test
  void planWithoutActivePodsIsEmpty() {
    ClusterConfig c = config(List.of(), List.of(A), A, A);
    assertThat(Rounds.plan(c, AllocationStrategy.leastShard(), RebalanceLimits.DEFAULT, new Random(1)).isEmpty())
        .isTrue();
  }

  // ---- survivors and unassignments

  @Test
  void survivorsDropMovesTouchingAPodThatFailedItsPing() {
    List<Move> moves = List.of(move(1, A, B), move(2, A, C), move(3, null, C), move(4, null, B), move(5, C, B));
    assertThat(Rounds.survivors(moves, Set.of(C.id()))).containsExactly(move(1, A, B), move(4, null, B));
    assertThat(Rounds.survivors(moves, Set.of(A.id())))
        .containsExactly(move(3, null, C), move(4, null, B), move(5, C, B));
    assertThat(Rounds.survivors(moves, Set.of())).isEqualTo(moves);
  }

  @Test
  void unassignmentsGroupShardsByOldOwnerInIdOrderAndSkipAllocations() {
    Map<PodId, List<Integer>> u = Rounds.unassignments(
        List.of(move(5, B, A), move(1, A, C), move(2, null, C), move(3, A, B), move(4, B, C)));
    assertThat(u.keySet()).containsExactly(A.id(), B.id());
    assertThat(u.get(A.id())).containsExactly(1, 3);
    assertThat(u.get(B.id())).containsExactly(5, 4);
  }

  // ---- settle

  @Test
  void settleMakesReleasedMovesAndAllocationsDropsKeptOnesAndRegrantsUnanswered() {
    List<Move> kept = List.of(move(1, A, C), move(2, A, C), move(3, B, C), move(4, null, C));
    Map<PodId, Optional<Set<Integer>>> released = Map.of(A.id(), Optional.of(Set.of(1)), B.id(), Optional.empty());
    Outcome o = Rounds.settle(kept, released);
    assertThat(o.moves()).containsExactly(move(1, A, C), move(4, null, C));
    assertThat(o.regrants()).containsExactly(Map.entry(3, B.id()));
    assertThat(o.failed()).containsExactly(B.id());
  }

  @Test
  void anOwnerMissingFromTheAnswersCountsAsFailed() {
    Outcome o = Rounds.settle(List.of(move(1, A, B)), Map.of());
    assertThat(o.moves()).isEmpty();
    assertThat(o.regrants()).containsExactly(Map.entry(1, A.id()));
    assertThat(o.failed()).containsExactly(A.id());
  }

  // ---- apply

  @Test
  void applyWritesEachMoveAtOneNewEpochAndCountsThem() {
    ClusterConfig c = config(List.of(A, B), List.of(), A, A, null);
    Applied a = Rounds.apply(c, new Outcome(List.of(move(1, A, B), move(3, null, B)), Map.of(), Set.of()), 7);
    assertThat(a.moved()).isEqualTo(2);
    assertThat(a.config().claim(0)).isEqualTo(Claim.stable(B.id(), 7));
    assertThat(a.config().claim(1)).isEqualTo(Claim.stable(A.id(), 1));
    assertThat(a.config().claim(2)).isEqualTo(Claim.stable(B.id(), 7));
  }

  @Test
  void applyNeverWritesAnEpochTheConfigAlreadyHas() {
    ClusterConfig c = config(List.of(A, B), List.of(), A, A).toBuilder().claim(1, Claim.stable(A.id(), 9)).build();
    Applied a = Rounds.apply(c, new Outcome(List.of(move(1, A, B)), Map.of(), Set.of()), 3);
    assertThat(a.config().claim(0)).isEqualTo(Claim.stable(B.id(), 10));
  }

  @Test
  void aMoveWhoseOldOwnerNoLongerHoldsTheShardIsSkipped() {
    ClusterConfig c = config(List.of(A, B, C), List.of(), C, A);
    Applied a = Rounds.apply(c, new Outcome(List.of(move(1, A, B)), Map.of(), Set.of()), 5);
    assertThat(a.moved()).isZero();
    assertThat(a.config()).isSameAs(c);
  }

  @Test
  void anAllocationIsSkippedWhenSomeActivePodOwnsTheShardMeanwhile() {
    ClusterConfig c = config(List.of(A, B), List.of(), A);
    Applied a = Rounds.apply(c, new Outcome(List.of(move(1, null, B)), Map.of(), Set.of()), 5);
    assertThat(a.moved()).isZero();
    assertThat(a.config()).isSameAs(c);
  }

  @Test
  void anAllocationMayTakeAShardOfAGonePod() {
    ClusterConfig c = config(List.of(B), List.of(A), A);
    Applied a = Rounds.apply(c, new Outcome(List.of(move(1, null, B)), Map.of(), Set.of()), 5);
    assertThat(a.moved()).isEqualTo(1);
    assertThat(a.config().claim(0)).isEqualTo(Claim.stable(B.id(), 5));
  }

  static Pod kv(int i) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 7100 + i), 1), PodVersion.KV);
  }

  @Test
  void aKvSlotsClaimRecordsTheOwnerBeforeItsTenureAndEntityShardsDoNot() {
    Pod s = kv(1);
    Pod x = kv(2);
    Pod t = kv(3);
    // S dies and the manager places its slot on X (an allocation); later X dies and it goes to T.
    ClusterConfig c = config(List.of(x, t), List.of(s), s);
    ClusterConfig onX = Rounds.apply(c, new Outcome(List.of(move(1, null, x)), Map.of(), Set.of()), 5).config();
    assertThat(onX.claim(0)).isEqualTo(Claim.stable(x.id(), s.id(), 5));
    // A regrant and a new term re-issue X's claim: the owner before X stays recorded.
    ClusterConfig regranted = Rounds.apply(onX, new Outcome(List.of(), Map.of(1, x.id()), Set.of(x.id())), 6).config();
    assertThat(regranted.claim(0)).isEqualTo(Claim.stable(x.id(), s.id(), 6));
    ClusterConfig newTerm = Rounds.reassert(regranted);
    assertThat(newTerm.claim(0).previousOwner()).isEqualTo(s.id());
    ClusterConfig xGone = Rounds.leave(newTerm, x.id());
    ClusterConfig onT = Rounds.apply(xGone, new Outcome(List.of(move(1, null, t)), Map.of(), Set.of()), 9).config();
    assertThat(onT.claim(0)).isEqualTo(Claim.stable(t.id(), x.id(), 9));
    // A hand-off to a target that left meanwhile goes back to T, still recording X before it.
    ClusterConfig back = Rounds.apply(onT, new Outcome(List.of(move(1, t, x)), Map.of(), Set.of()), 10).config();
    assertThat(back.claim(0)).isEqualTo(Claim.stable(t.id(), x.id(), 10));
    // A hand-off from a live owner records it; the config survives its encoding.
    Pod u = kv(4);
    ClusterConfig withU = Rounds.join(back, u);
    ClusterConfig handedOff = Rounds.apply(withU, new Outcome(List.of(move(1, t, u)), Map.of(), Set.of()), 12).config();
    assertThat(ClusterConfig.decode(handedOff.encode()).claim(0)).isEqualTo(Claim.stable(u.id(), t.id(), 12));
    // Entity pods: plain claims, so their configs keep their encoding.
    ClusterConfig entities = config(List.of(B), List.of(A), A);
    assertThat(Rounds.apply(entities, new Outcome(List.of(move(1, null, B)), Map.of(), Set.of()), 5).config()
        .claim(0).previousOwner()).isNull();
  }

  @Test
  void aReleasedShardWhoseTargetLeftGoesBackToItsOldOwnerAtTheNewEpoch() {
    ClusterConfig c = config(List.of(A), List.of(B), A, A);
    Applied a = Rounds.apply(c, new Outcome(List.of(move(1, A, B)), Map.of(), Set.of()), 5);
    assertThat(a.moved()).isZero();
    assertThat(a.config().claim(0)).isEqualTo(Claim.stable(A.id(), 5));
    assertThat(a.config().claim(1)).isEqualTo(Claim.stable(A.id(), 1));
  }

  @Test
  void anAllocationToAPodThatLeftIsDropped() {
    ClusterConfig c = config(List.of(A), List.of(B), (Pod) null);
    Applied a = Rounds.apply(c, new Outcome(List.of(move(1, null, B)), Map.of(), Set.of()), 5);
    assertThat(a.config()).isSameAs(c);
  }

  @Test
  void aRegrantReissuesTheShardToItsOwnerOnlyWhileItStillOwnsIt() {
    ClusterConfig c = config(List.of(A, B), List.of(), A, B);
    Applied a = Rounds.apply(c, new Outcome(List.of(), Map.of(1, A.id(), 2, A.id()), Set.of(A.id())), 4);
    assertThat(a.moved()).isZero();
    assertThat(a.config().claim(0)).isEqualTo(Claim.stable(A.id(), 4));
    assertThat(a.config().claim(1)).isEqualTo(Claim.stable(B.id(), 1));
  }

  @Test
  void applyingNothingReturnsTheSameConfig() {
    ClusterConfig c = config(List.of(A), List.of(), A);
    Applied a = Rounds.apply(c, new Outcome(List.of(), Map.of(), Set.of()), 2);
    assertThat(a.config()).isSameAs(c);
    assertThat(a.moved()).isZero();
  }

  // ---- push targets and owed regrants

  @Test
  void pushTargetsAreTheNewOwnersAndTheRegrantedPods() {
    Outcome o = new Outcome(List.of(move(1, A, B), move(2, null, B)), Map.of(3, C.id()), Set.of(C.id()));
    assertThat(Rounds.pushTargets(o)).containsExactly(B.id(), C.id());
  }

  @Test
  void aRoundThatCouldNotBeSavedOwesItsOldOwnersTheirShards() {
    Outcome o = new Outcome(List.of(move(1, A, B), move(2, null, B)), Map.of(3, C.id()), Set.of(C.id()));
    assertThat(Rounds.owedAfterFailure(o)).containsOnly(Map.entry(1, A.id()), Map.entry(3, C.id()));
  }

  @Test
  void owedRegrantsJoinTheNextOutcomeExceptForShardsItMoves() {
    Outcome o = new Outcome(List.of(move(1, A, B)), Map.of(4, B.id()), Set.of(B.id()));
    Map<Integer, PodId> owed = new HashMap<>(Map.of(1, A.id(), 2, A.id(), 4, C.id()));
    Outcome with = Rounds.owing(o, owed, List.of(move(1, A, B), move(5, B, A)));
    assertThat(with.moves()).isEqualTo(o.moves());
    assertThat(with.failed()).isEqualTo(o.failed());
    assertThat(with.regrants()).containsOnly(Map.entry(2, A.id()), Map.entry(4, B.id()));
    assertThat(Rounds.owing(o, Map.of(), List.of())).isSameAs(o);
  }

  // ---- start of a term, membership

  @Test
  void reassertReissuesEveryShardOfAnActivePodAtOneNewEpochAndLeavesTheRest() {
    ClusterConfig c = config(List.of(A, B), List.of(C), A, B, C, null).toBuilder()
        .claim(1, Claim.stable(B.id(), 6)).build();
    ClusterConfig r = Rounds.reassert(c);
    assertThat(r.claim(0)).isEqualTo(Claim.stable(A.id(), 7));
    assertThat(r.claim(1)).isEqualTo(Claim.stable(B.id(), 7));
    assertThat(r.claim(2)).isEqualTo(Claim.stable(C.id(), 1));
    assertThat(r.owner(3)).isNull();
  }

  @Test
  void reassertWithoutActiveOwnersChangesNothing() {
    ClusterConfig c = config(List.of(A), List.of(C), C, null);
    assertThat(Rounds.reassert(c)).isSameAs(c);
  }

  @Test
  void joinListsThePodActiveAtANewEpoch() {
    ClusterConfig c = config(List.of(A), List.of(), A);
    ClusterConfig j = Rounds.join(c, B);
    assertThat(j.pod(B.id())).contains(new PodEntry(B, PodStatus.ACTIVE, 2));
    assertThatThrownBy(() -> Rounds.join(c, null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void leaveMarksThePodGoneAtANewEpochOnce() {
    ClusterConfig c = config(List.of(A, B), List.of(), A, B);
    ClusterConfig l = Rounds.leave(c, B.id());
    assertThat(l.pod(B.id())).contains(new PodEntry(B, PodStatus.GONE, 2));
    assertThat(l.owner(1)).isEqualTo(B.id());
    assertThat(Rounds.leave(l, B.id())).isSameAs(l);
    assertThat(Rounds.leave(c, C.id())).isSameAs(c);
  }

  @Test
  void recordsCopyTheirParts() {
    List<Move> moves = new java.util.ArrayList<>(List.of(move(1, A, B)));
    Plan p = new Plan(moves, new java.util.HashSet<>(Set.of(B.id(), A.id())));
    moves.clear();
    assertThat(p.moves()).hasSize(1);
    assertThat(p.involved()).containsExactly(A.id(), B.id());
    assertThatThrownBy(() -> p.moves().clear()).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void pruningRemovesTheOldestUnnamedTombstonesFirstAndOnlyAsManyAsOverTheLimit() {
    Pod p0 = pod(10);
    Pod p1 = pod(11);
    Pod p2 = pod(12);
    Pod p3 = pod(13);
    Pod p4 = pod(14);
    Pod p5 = pod(15);
    ClusterConfig c = ClusterConfig.empty(2).toBuilder()
        .pod(new PodEntry(p0, PodStatus.ACTIVE, 1))
        .pod(new PodEntry(p2, PodStatus.GONE, 2)) // the oldest, but a claim names it as its peer
        .pod(new PodEntry(p5, PodStatus.GONE, 3))
        .pod(new PodEntry(p4, PodStatus.GONE, 4))
        .pod(new PodEntry(p3, PodStatus.GONE, 5))
        .pod(new PodEntry(p1, PodStatus.GONE, 6)) // carries the config's epoch
        .claim(0, new Claim(p0.id(), io.atoll.core.slots.SlotState.MIGRATING, p2.id(), 1))
        .build();
    assertThat(c.epoch()).isEqualTo(6);
    Rounds.Pruned pruned = Rounds.pruneTombstones(c, 3);
    assertThat(pruned.pruned()).as("five tombstones, three kept: the two oldest unnamed go")
        .containsExactly(p5.id(), p4.id());
    assertThat(pruned.config().pod(p5.id())).isEmpty();
    assertThat(pruned.config().pod(p4.id())).isEmpty();
    assertThat(pruned.config().pods()).extracting(PodEntry::id)
        .containsExactlyInAnyOrder(p0.id(), p1.id(), p2.id(), p3.id());
    assertThat(Rounds.pruneTombstones(c, 5).pruned()).as("at the limit").isEmpty();
    assertThat(Rounds.pruneTombstones(c, 5).config()).isSameAs(c);
    assertThat(Rounds.pruneTombstones(c, 0).pruned()).as("only the unnamed below the top epoch")
        .containsExactly(p5.id(), p4.id(), p3.id());
  }

  @Test
  void aNewRolesSpaceMayFillTheLayoutToTheMostShardsAndNotOneMore() {
    ClusterConfig c = ClusterConfig.empty(4);
    ClusterConfig full = Rounds.grow(c, List.of("w"), 6, 10);
    assertThat(full.size()).isEqualTo(10);
    assertThat(full.spaces().of("w").count()).isEqualTo(6);
    assertThatThrownBy(() -> Rounds.grow(c, List.of("w"), 7, 10)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("space 'w': 7 more shards would make 11 (expected: at most 10 shards in all");
  }
}
