package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.slots.SlotState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The epoch rules of a node's cluster state, on plain states (no network). */
class ClusterStateTest {
  private final AtomicLong clock = new AtomicLong(1_000);
  private final List<ClusterView> saved = new ArrayList<>();

  private ClusterState node(int port) {
    Pod me = Nodes.pod("127.0.0.1", port, port * 7919L, port + 10000);
    return new ClusterState(ClusterState.fresh(me), clock::get, saved::add);
  }

  private static int[] range(int from, int to) {
    return IntStream.rangeClosed(from, to).toArray();
  }

  /** Gossip until nothing changes: every state merges every other's config. */
  private static void gossip(ClusterState... nodes) {
    for (int round = 0; round < 3; round++) {
      for (ClusterState a : nodes) {
        for (ClusterState b : nodes) {
          if (a != b) {
            b.merge(a.view().config());
          }
        }
      }
    }
  }

  @Test
  void createThenReshardConvergesOnOneOwnerPerSlot() {
    ClusterState a = node(7001);
    ClusterState b = node(7002);
    a.addSlots(range(0, 8191));
    b.addSlots(range(8192, 16383));
    a.setConfigEpoch(1);
    b.setConfigEpoch(2);
    gossip(a, b);
    ClusterView v = a.view();
    assertThat(v.ok()).isTrue();
    assertThat(v.knownNodes()).isEqualTo(2);
    assertThat(v.config().epoch()).isEqualTo(2);
    String idA = a.view().myNodeId();
    String idB = b.view().myNodeId();
    assertThat(idA).matches("[0-9a-f]{40}").isEqualTo(b.view().nodeId(a.view().me()));

    // Move slot 5 from a to b the way redis-cli does it.
    b.setSlotMigration(5, SlotState.IMPORTING, idA);
    a.setSlotMigration(5, SlotState.MIGRATING, idB);
    gossip(a, b);
    assertThat(b.view().config().owner(5)).isEqualTo(a.view().me()); // marks are local, not gossiped
    assertThat(b.view().importing()).containsKey(5);
    assertThat(a.view().migrating()).containsKey(5);
    b.setSlotNode(5, idB, s -> false);
    // b's epoch (2) is already the greatest and its own: no bump (Redis' rule), its claim beats a's 1.
    assertThat(b.view().myEpoch()).isEqualTo(2);
    assertThat(b.view().config().epoch(5)).isEqualTo(2);
    a.setSlotNode(5, idB, s -> false);
    gossip(a, b);
    // The other way: a (epoch 1, not the greatest) takes slot 9000 and bumps above everything.
    a.setSlotMigration(9000, SlotState.IMPORTING, idB);
    b.setSlotMigration(9000, SlotState.MIGRATING, idA);
    a.setSlotNode(9000, idA, s -> false);
    assertThat(a.view().myEpoch()).isEqualTo(3);
    b.setSlotNode(9000, idA, s -> false);
    gossip(a, b);
    for (ClusterState n : List.of(a, b)) {
      assertThat(n.view().config().owner(9000)).isEqualTo(a.view().me());
      assertThat(n.view().config().owner(9001)).isEqualTo(b.view().me());
      assertThat(n.view().config().owner(5)).isEqualTo(b.view().me());
      assertThat(n.view().config().owner(6)).isEqualTo(a.view().me());
      assertThat(n.view().migrating()).isEmpty();
      assertThat(n.view().importing()).isEmpty();
    }
  }

  @Test
  void aBumpedEpochWinsAConflictingClaimEverywhere() {
    ClusterState a = node(7001);
    ClusterState b = node(7002);
    a.addSlots(range(0, 16383));
    a.setConfigEpoch(1);
    gossip(a, b);
    // b takes slot 9 for itself without a migration (an operator's SETSLOT NODE): its bump wins.
    b.setSlotNode(9, b.view().myNodeId(), s -> false);
    assertThat(b.bumpEpoch()).startsWith("BUMPED ");
    gossip(a, b);
    assertThat(a.view().config().owner(9)).isEqualTo(b.view().me());
    assertThat(b.bumpEpoch()).isEqualTo("STILL " + b.view().myEpoch());
  }

  @Test
  void refusalsUseRedisTexts() {
    ClusterState a = node(7001);
    a.addSlots(new int[] {1, 2});
    assertThatThrownBy(() -> a.addSlots(new int[] {2})).hasMessage("ERR Slot 2 is already busy");
    assertThatThrownBy(() -> a.addSlots(new int[] {3, 3})).hasMessage("ERR Slot 3 specified multiple times");
    assertThatThrownBy(() -> a.delSlots(new int[] {4})).hasMessage("ERR Slot 4 is already unassigned");
    assertThatThrownBy(() -> a.setSlotMigration(5, SlotState.MIGRATING, "x"))
        .hasMessage("ERR I'm not the owner of hash slot 5");
    assertThatThrownBy(() -> a.setSlotMigration(1, SlotState.IMPORTING, "x"))
        .hasMessage("ERR I'm already the owner of hash slot 1");
    assertThatThrownBy(() -> a.forget(a.view().myNodeId())).hasMessage("ERR I tried hard but I can't forget myself...");
    assertThatThrownBy(() -> a.setConfigEpoch(-1)).hasMessage("ERR Invalid config epoch specified: -1");
    a.setConfigEpoch(4);
    assertThatThrownBy(() -> a.setConfigEpoch(5)).hasMessage("ERR Node config epoch is already non-zero");
  }

  @Test
  void deletedSlotsStayUnassignedAfterGossipAndForgottenNodesStayOut() {
    ClusterState a = node(7001);
    ClusterState b = node(7002);
    a.addSlots(range(0, 100));
    gossip(a, b);
    a.delSlots(new int[] {7});
    gossip(a, b);
    assertThat(b.view().config().owner(7)).isNull();
    assertThat(b.view().config().owner(8)).isEqualTo(a.view().me());
    b.forget(a.view().myNodeId());
    b.merge(a.view().config());
    assertThat(b.view().knownNodes()).isEqualTo(1);
    assertThat(b.view().config().owner(8)).isNull();
    clock.addAndGet(61_000); // the ban lasts a minute, as Redis'
    b.merge(a.view().config());
    assertThat(b.view().knownNodes()).isEqualTo(2);
  }

  @Test
  void theConfigFileRoundTripsAndRefusesGarbage() throws Exception {
    Path dir = Files.createTempDirectory("kv-conf");
    ClusterState a = node(7001);
    a.addSlots(range(0, 10));
    a.setConfigEpoch(3);
    ConfigFile file = new ConfigFile(dir);
    file.save(a.view());
    ClusterView back = file.load().orElseThrow();
    assertThat(back.config()).isEqualTo(a.view().config());
    assertThat(back.me()).isEqualTo(a.view().me());
    assertThat(saved).isNotEmpty(); // every change was reported for saving
    Files.write(file.path(), new byte[] {1, 2, 3});
    assertThatThrownBy(file::load).isInstanceOf(IllegalStateException.class).hasMessageContaining("nodes.conf")
        .hasMessageContaining("move it away");
  }

  @Test
  void mergeIgnoresOlderClaims() {
    ClusterState a = node(7001);
    a.addSlots(range(0, 10));
    a.setConfigEpoch(5);
    ClusterConfig newer = a.view().config();
    PodId me = a.view().me();
    ClusterState b = node(7002);
    b.merge(newer);
    ClusterConfig stale = ClusterState.fresh(b.view().config().pod(me).orElseThrow().pod()).config();
    b.merge(stale);
    assertThat(b.view().config().owner(3)).isEqualTo(me);
  }

  /** A managed config (epoch {@code epoch}): {@code me} owns slots 0..9; {@code peer} has {@code status}. */
  private static ClusterConfig managed(Pod me, Pod peer, PodStatus status, long epoch) {
    ClusterConfig.Builder b = ClusterConfig.empty(16384).toBuilder()
        .pod(new PodEntry(me, PodStatus.ACTIVE, 1)).pod(new PodEntry(peer, status, epoch));
    for (int s = 0; s < 10; s++) {
      b.claim(s, Claim.stable(me.id(), epoch));
    }
    return b.build();
  }

  @Test
  void aHandOffMarkWhosePeerLeftIsDroppedAndOneWhosePeerLivesIsKept() {
    ClusterState source = node(7001);
    Pod me = source.view().config().pod(source.view().me()).orElseThrow().pod();
    Pod target = Nodes.pod("127.0.0.1", 7002, 7002 * 7919L, 17002);
    ClusterState importer = new ClusterState(ClusterState.fresh(target), clock::get, saved::add);
    assertThat(source.adopt(managed(me, target, PodStatus.ACTIVE, 2))).isTrue();
    assertThat(importer.adopt(managed(me, target, PodStatus.ACTIVE, 2))).isTrue();
    // A hand-off of slots 3 and 4 started, then failed part way (the manager gave them back).
    importer.markImporting(new int[] {3, 4}, me.id());
    source.markMigrating(new int[] {3, 4}, target.id());
    assertThat(source.adopt(managed(me, target, PodStatus.ACTIVE, 3))).isTrue();
    assertThat(source.view().migrating()).as("the target lives: its keys stay findable (-ASK)")
        .containsOnlyKeys(3, 4);
    assertThat(importer.adopt(managed(me, target, PodStatus.ACTIVE, 3))).isTrue();
    assertThat(importer.view().importing()).containsOnlyKeys(3, 4);
    // The target is declared dead (a tombstone), then pruned: the marks go, so the slot is served
    // here alone and can be handed to another node.
    assertThat(source.adopt(managed(me, target, PodStatus.GONE, 4))).isTrue();
    assertThat(source.view().migrating()).isEmpty();
    source.markMigrating(new int[] {5}, target.id());
    ClusterConfig pruned = ClusterConfig.empty(16384).toBuilder().pod(new PodEntry(me, PodStatus.ACTIVE, 1))
        .claim(5, Claim.stable(me.id(), 5)).build();
    assertThat(source.adopt(pruned)).isTrue();
    assertThat(source.view().migrating()).isEmpty();
  }

  @Test
  void aReturnPairsTheMarksOnBothSidesAndEndsWhenThePeerDiesOrTheMoveTurnsForward() {
    ClusterState source = node(7001);
    Pod me = source.view().config().pod(source.view().me()).orElseThrow().pod();
    Pod target = Nodes.pod("127.0.0.1", 7002, 7002 * 7919L, 17002);
    ClusterState importer = new ClusterState(ClusterState.fresh(target), clock::get, saved::add);
    assertThat(source.adopt(managed(me, target, PodStatus.ACTIVE, 2))).isTrue();
    assertThat(importer.adopt(managed(me, target, PodStatus.ACTIVE, 2))).isTrue();
    // A hand-off of slots 3, 4 and 5 stopped part way; slot 6 never started.
    importer.markImporting(new int[] {3, 4, 5}, me.id());
    source.markMigrating(new int[] {3, 4, 5}, target.id());
    assertThat(source.markReturning(new int[] {3, 4, 5, 6}, target.id())).containsExactly(3, 4, 5);
    assertThat(importer.markReturning(new int[] {3, 4, 5, 6}, me.id())).containsExactly(3, 4, 5);
    assertThat(source.view().importing()).as("the puller's pair").containsOnlyKeys(3, 4, 5);
    assertThat(importer.view().migrating()).as("the returner's pair").containsOnlyKeys(3, 4, 5);
    // A newer config that keeps the slots on the source keeps both pairs.
    assertThat(source.adopt(managed(me, target, PodStatus.ACTIVE, 3))).isTrue();
    assertThat(importer.adopt(managed(me, target, PodStatus.ACTIVE, 3))).isTrue();
    assertThat(source.view().migrating()).containsOnlyKeys(3, 4, 5);
    assertThat(source.view().importing()).containsOnlyKeys(3, 4, 5);
    assertThat(importer.view().migrating()).containsOnlyKeys(3, 4, 5);
    assertThat(importer.view().importing()).containsOnlyKeys(3, 4, 5);
    // Slot 3's keys are all back: it ends on both sides.
    source.endReturn(3, target.id());
    importer.endReturn(3, me.id());
    assertThat(source.view().migrating()).containsOnlyKeys(4, 5);
    assertThat(importer.view().importing()).containsOnlyKeys(4, 5);
    // The manager sends slot 4 to the same target again: the move turns forward on both sides.
    importer.markImporting(new int[] {4}, me.id());
    source.markMigrating(new int[] {4}, target.id());
    assertThat(source.view().importing()).containsOnlyKeys(5);
    assertThat(importer.view().migrating()).containsOnlyKeys(5);
    assertThat(source.view().migrating()).containsOnlyKeys(4, 5);
    assertThat(importer.view().importing()).containsOnlyKeys(4, 5);
    // The target dies: the source's marks go (the keys still there died with it) and the slots are
    // the source's alone.
    assertThat(source.adopt(managed(me, target, PodStatus.GONE, 4))).isTrue();
    assertThat(source.view().migrating()).isEmpty();
    assertThat(source.view().importing()).isEmpty();
  }

  @Test
  void aReturningTargetDropsItsPairWhenTheSlotGoesToAThirdNodeAndAForwardMarkGoesWhenTheMoveIsMade() {
    ClusterState source = node(7001);
    Pod me = source.view().config().pod(source.view().me()).orElseThrow().pod();
    Pod target = Nodes.pod("127.0.0.1", 7002, 7002 * 7919L, 17002);
    Pod third = Nodes.pod("127.0.0.1", 7003, 7003 * 7919L, 17003);
    ClusterState importer = new ClusterState(ClusterState.fresh(target), clock::get, saved::add);
    assertThat(importer.adopt(managed(me, target, PodStatus.ACTIVE, 2))).isTrue();
    importer.markImporting(new int[] {3}, me.id());
    assertThat(importer.markReturning(new int[] {3}, me.id())).containsExactly(3);
    ClusterConfig elsewhere = managed(me, target, PodStatus.ACTIVE, 3).toBuilder()
        .pod(new PodEntry(third, PodStatus.ACTIVE, 3)).claim(3, Claim.stable(third.id(), 3)).build();
    assertThat(importer.adopt(elsewhere)).isTrue();
    assertThat(importer.view().migrating()).isEmpty();
    assertThat(importer.view().importing()).isEmpty();
    // A forward hand-off's MIGRATING mark still goes once the target owns the slot.
    assertThat(source.adopt(managed(me, target, PodStatus.ACTIVE, 2))).isTrue();
    source.markMigrating(new int[] {7}, target.id());
    assertThat(source.adopt(managed(me, target, PodStatus.ACTIVE, 3).toBuilder()
        .claim(7, Claim.stable(target.id(), 3)).build())).isTrue();
    assertThat(source.view().migrating()).isEmpty();
  }

  @Test
  void aPeerConfigLaidOutInMoreThanTheSlotSpaceIsRefusedAndChangesNothing() {
    ClusterState a = node(7001);
    ClusterState b = node(7002);
    a.addSlots(range(0, 16383));
    a.setConfigEpoch(1);
    gossip(a, b);
    ClusterView before = b.view();
    assertThat(before.ok()).isTrue();
    // A bus message whose config grew the layout by one appended space: the config type would
    // merge it (entity spaces grow that way), which would make this node's cluster 16385 positions.
    ClusterConfig grown = a.view().config().extendTo(a.view().config().spaces().append("x", 1));
    assertThatThrownBy(() -> b.merge(grown)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spaces").hasMessageContaining("16384");
    assertThat(b.view()).isSameAs(before);
    assertThat(b.view().config().size()).isEqualTo(16384);
    assertThat(b.view().ok()).isTrue();
  }

  /**
   * A managed replica of {@code primary} ({@code promoted} false), or the config that promotes it:
   * the primary's tombstone names it heir, and it owns slot 5, which its primary was handing to
   * {@code target}.
   */
  private static ClusterConfig replicaConfig(long epoch, Pod me, Pod primary, Pod target, boolean promoted,
      boolean heir) {
    ClusterConfig.Builder b = ClusterConfig.empty(io.atoll.core.slots.KeySlots.SLOT_COUNT).toBuilder();
    b.pod(new PodEntry(promoted ? me : Nodes.withPrimary(me, Nodes.nodeId(primary.id())), PodStatus.ACTIVE,
        promoted ? epoch : 1));
    b.pod(new PodEntry(promoted && heir ? Nodes.withHeir(primary, Nodes.nodeId(me.id())) : primary,
        promoted ? PodStatus.GONE : PodStatus.ACTIVE, 1));
    b.pod(new PodEntry(target, PodStatus.ACTIVE, 1));
    PodId owner = promoted && heir ? me.id() : primary.id();
    b.claim(5, Claim.stable(owner, epoch));
    b.claim(6, Claim.stable(owner, epoch));
    b.claim(7, Claim.stable(target.id(), epoch));
    return b.build();
  }

  private final Pod me = Nodes.pod("127.0.0.1", 7001, 11, 17001);
  private final Pod primary = Nodes.pod("127.0.0.1", 7002, 22, 17002);
  private final Pod target = Nodes.pod("127.0.0.1", 7003, 33, 17003);

  /** A managed node the manager made a replica of {@link #primary}. */
  private ClusterState aReplica() {
    ClusterState state = new ClusterState(ClusterState.fresh(me), clock::get, saved::add);
    state.managed("manager", () -> true);
    assertThat(state.adopt(replicaConfig(3, me, primary, target, false, true))).isTrue();
    return state;
  }

  @Test
  void aPromotedReplicaRoutesByItsPrimarysMirroredMarksFromItsFirstViewAsPrimary() {
    ClusterState state = aReplica();
    // The stream left the primary's marks in this node's slots: 5 moving to the target, 7 (the
    // target's) arriving from it, and 6 moving to a node that is this one (never taken).
    java.util.Map<Integer, PodId> held = new java.util.HashMap<>();
    MarkRecords.Mirror mirrored = new MarkRecords.Mirror() {
      @Override
      public MarkRecords.SlotMarks marks(int s) {
        return switch (s) {
          case 5 -> new MarkRecords.SlotMarks(target.id(), null);
          case 6 -> new MarkRecords.SlotMarks(me.id(), null);
          case 7 -> new MarkRecords.SlotMarks(null, target.id());
          default -> null;
        };
      }

      @Override
      public void hold(int s, PodId to) {
        assertThat(state.view().migrating()).as("held before the view that routes by the mark").isEmpty();
        held.put(s, to);
      }
    };
    assertThat(state.adopt(replicaConfig(4, me, primary, target, true, true), mirrored)).isTrue();
    assertThat(state.view().migrating()).containsExactly(java.util.Map.entry(5, target.id()));
    assertThat(state.view().importing()).containsExactly(java.util.Map.entry(7, target.id()));
    // Its primary may have sent a batch of slot 5 whose deletions never reached the stream.
    assertThat(held).containsExactly(java.util.Map.entry(5, target.id()));
  }

  @Test
  void aReplicaWhoseRoleEndsWithoutBeingNamedHeirTakesNoMirroredMarks() {
    ClusterState state = aReplica();
    MarkRecords.Mirror everywhere = new MarkRecords.Mirror() {
      @Override
      public MarkRecords.SlotMarks marks(int s) {
        return new MarkRecords.SlotMarks(target.id(), target.id());
      }

      @Override
      public void hold(int s, PodId to) {
        throw new AssertionError("nothing is held by a node that was not promoted");
      }
    };
    assertThat(state.adopt(replicaConfig(4, me, primary, target, true, false), everywhere)).isTrue();
    assertThat(state.view().migrating()).isEmpty();
    assertThat(state.view().importing()).isEmpty();
  }
}
