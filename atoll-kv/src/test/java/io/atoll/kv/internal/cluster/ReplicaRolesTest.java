package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Pod;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * Roles on plain cluster states (no network): CLUSTER REPLICATE's refusals, and a replica's
 * takeover spreading by gossip in any order until the old primary and its other replicas follow
 * the new primary, every slot with one owner.
 */
class ReplicaRolesTest {
  private final AtomicLong clock = new AtomicLong(1_000);

  private ClusterState node(int port) {
    Pod me = Nodes.pod("127.0.0.1", port, port * 7919L, port + 10000);
    return new ClusterState(ClusterState.fresh(me), clock::get, v -> { });
  }

  private static int[] range(int from, int to) {
    return IntStream.rangeClosed(from, to).toArray();
  }

  private static void gossip(ClusterState... nodes) {
    for (int round = 0; round < 4; round++) {
      for (ClusterState a : nodes) {
        for (ClusterState b : nodes) {
          if (a != b) {
            b.merge(a.view().config());
          }
        }
      }
    }
  }

  /** Two primaries (a: 0-8191, b: the rest), a's replicas r1 and r2, all agreed. */
  private ClusterState[] cluster() {
    ClusterState a = node(7001);
    ClusterState b = node(7002);
    ClusterState r1 = node(7003);
    ClusterState r2 = node(7004);
    a.addSlots(range(0, 8191));
    b.addSlots(range(8192, 16383));
    a.setConfigEpoch(1);
    b.setConfigEpoch(2);
    r1.setConfigEpoch(3);
    r2.setConfigEpoch(4);
    gossip(a, b, r1, r2);
    r1.replicate(a.view().myNodeId(), false);
    r2.replicate(a.view().myNodeId(), false);
    gossip(a, b, r1, r2);
    return new ClusterState[] {a, b, r1, r2};
  }

  @Test
  void replicateIsRefusedAsRedisRefusesIt() {
    ClusterState[] n = cluster();
    ClusterState a = n[0];
    ClusterState b = n[1];
    ClusterState r1 = n[2];
    assertThatThrownBy(() -> a.replicate(b.view().myNodeId(), false))
        .hasMessage("ERR To set a master the node must be empty and without assigned slots.");
    assertThatThrownBy(() -> r1.replicate(r1.view().myNodeId(), false)).hasMessage("ERR Can't replicate myself");
    assertThatThrownBy(() -> b.replicate(r1.view().myNodeId(), false))
        .hasMessage("ERR I can only replicate a master, not a replica.");
    ClusterState empty = node(7005);
    assertThatThrownBy(() -> empty.replicate(a.view().myNodeId(), false)).hasMessageStartingWith("ERR Unknown node");
    // A node without slots but with keys is refused too; a replica may move to another primary.
    gossip(a, b, r1, empty);
    assertThatThrownBy(() -> empty.replicate(a.view().myNodeId(), true))
        .hasMessage("ERR To set a master the node must be empty and without assigned slots.");
    r1.replicate(b.view().myNodeId(), true);
    assertThat(r1.view().myPrimary()).isEqualTo(b.view().me());
  }

  @Test
  void aTakeoverMakesTheOldPrimaryAndItsOtherReplicasFollowTheNewOne() {
    ClusterState[] n = cluster();
    ClusterState a = n[0];
    ClusterState r1 = n[2];
    ClusterState r2 = n[3];
    assertThat(r1.takeOver(0)).isTrue();
    gossip(n);
    for (ClusterState s : n) {
      ClusterView v = s.view();
      assertThat(v.config().owner(0)).isEqualTo(r1.view().me());
      assertThat(v.primaryOf(a.view().me())).isEqualTo(r1.view().me());
      assertThat(v.primaryOf(r2.view().me())).isEqualTo(r1.view().me());
      assertThat(v.primaryOf(r1.view().me())).isNull();
      assertThat(v.ok()).isTrue();
    }
    assertThat(a.takeOver(0)).isTrue(); // and back, the same way
    gossip(n);
    assertThat(r1.view().myPrimary()).isEqualTo(a.view().me());
    assertThat(r2.view().myPrimary()).isEqualTo(a.view().me());
  }

  @Test
  void aReplicaResetSoftStaysAPrimaryOnceItsPeersHearIt() {
    ClusterState[] n = cluster();
    ClusterState r1 = n[2];
    Pod me = r1.view().config().pod(r1.view().me()).orElseThrow().pod();
    r1.reset(me, false);
    assertThat(r1.view().myPrimary()).isNull();
    gossip(n); // its peers still hold its entry with the replica mark
    assertThat(r1.view().myPrimary()).as("its entry without the mark wins over the one its peers kept").isNull();
  }

  @Test
  void aPrimaryWhoseSlotsAllMovedToAnotherPrimaryStaysAPrimary() {
    ClusterState[] n = cluster();
    ClusterState a = n[0];
    ClusterState b = n[1];
    for (int s = 0; s <= 8191; s++) {
      a.setSlotNode(s, b.view().myNodeId(), slot -> false); // a reshard that took every slot away
    }
    gossip(n);
    assertThat(a.view().myPrimary()).isNull();
    assertThat(a.view().config().ownedCounts().getOrDefault(a.view().me(), 0)).isZero();
  }

  /** Whatever order the configs travel in after a takeover, every node ends with the same roles. */
  @Property(tries = 200)
  void aTakeoverConvergesWhateverTheGossipOrder(@ForAll long seed) {
    Random random = new Random(seed);
    ClusterState[] n = cluster();
    ClusterState taker = random.nextBoolean() ? n[2] : n[3];
    taker.takeOver(0);
    for (int i = 0; i < 60; i++) {
      ClusterState from = n[random.nextInt(n.length)];
      ClusterState to = n[random.nextInt(n.length)];
      if (from != to) {
        to.merge(from.view().config());
      }
    }
    gossip(n);
    List<String> views = new ArrayList<>();
    for (ClusterState s : n) {
      ClusterView v = s.view();
      StringBuilder roles = new StringBuilder();
      for (ClusterState o : n) {
        roles.append(o.view().me().address().port()).append("->").append(v.primaryOf(o.view().me())).append(';');
      }
      views.add(roles + " owner0=" + v.config().owner(0));
      assertThat(v.config().owner(0)).isEqualTo(taker.view().me());
    }
    assertThat(views).allMatch(views.get(0)::equals);
    assertThat(n[0].view().myPrimary()).isEqualTo(taker.view().me());
  }
}
