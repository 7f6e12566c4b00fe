package io.atoll.kv.internal.managed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.slots.SlotState;
import io.atoll.kv.internal.cluster.Nodes;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Renaming between the manager's config (control addresses) and a node's (client addresses). */
class ManagedConfigsTest {
  private static final PodId A = new PodId(new PodAddress("10.0.0.1", 17000), 11);
  private static final PodId B = new PodId(new PodAddress("10.0.0.2", 17001), 12);

  @Test
  void aNodesNameMovesByTheControlOffsetBothWaysKeepingHostAndIncarnation() {
    PodId kv = ManagedConfigs.toKv(A);
    assertThat(kv).isEqualTo(new PodId(new PodAddress("10.0.0.1", 7000), 11));
    assertThat(ManagedConfigs.toManager(kv)).isEqualTo(A);
  }

  @Test
  void aReplicaTheManagerMadeNamesItsPrimarysRedisIdAsInRedisClusterMode() {
    ClusterConfig managed = ClusterConfig.empty(16384, ClusterId.random(new Random(3))).toBuilder()
        .pod(new PodEntry(new Pod(A, PodVersion.KV), PodStatus.ACTIVE, 3))
        .pod(new PodEntry(new Pod(B, PodVersion.kvReplicaOf(A.incarnation())), PodStatus.ACTIVE, 4))
        .claim(0, Claim.stable(A, 3))
        .build();
    ClusterConfig kv = ManagedConfigs.toKv(managed);
    Pod replica = kv.pod(ManagedConfigs.toKv(B)).orElseThrow().pod();
    assertThat(Nodes.primaryOf(replica)).isEqualTo(Nodes.nodeId(ManagedConfigs.toKv(A)));
    assertThat(Nodes.primaryOf(kv.pod(ManagedConfigs.toKv(A)).orElseThrow().pod())).isNull();
    // A primary declared dead (GONE) is still named: the replica holds its copies until promoted.
    ClusterConfig dead = managed.toBuilder().pod(new PodEntry(new Pod(A, PodVersion.KV), PodStatus.GONE, 5)).build();
    assertThat(Nodes.primaryOf(ManagedConfigs.toKv(dead).pod(ManagedConfigs.toKv(B)).orElseThrow().pod()))
        .isEqualTo(Nodes.nodeId(ManagedConfigs.toKv(A)));
  }

  @Test
  void aDeadPrimaryTakenOverNamesTheActiveNodeAtTheEndOfItsLineOfHeirs() {
    PodId c = new PodId(new PodAddress("127.0.0.1", 17003), 0xc);
    // A died, B took over; B died, C took over: A's heir is C. B alone dead: A's heir is B.
    ClusterConfig managed = ClusterConfig.empty(16384, ClusterId.random(new Random(4))).toBuilder()
        .pod(new PodEntry(new Pod(A, PodVersion.kvTakenOverBy(B.incarnation())), PodStatus.GONE, 3))
        .pod(new PodEntry(new Pod(B, PodVersion.kvTakenOverBy(c.incarnation())), PodStatus.GONE, 4))
        .pod(new PodEntry(new Pod(c, PodVersion.KV), PodStatus.ACTIVE, 5))
        .claim(0, Claim.stable(c, 5))
        .build();
    ClusterConfig kv = ManagedConfigs.toKv(managed);
    String cId = Nodes.nodeId(ManagedConfigs.toKv(c));
    assertThat(Nodes.heirOf(kv.pod(ManagedConfigs.toKv(A)).orElseThrow().pod())).isEqualTo(cId);
    assertThat(Nodes.heirOf(kv.pod(ManagedConfigs.toKv(B)).orElseThrow().pod())).isEqualTo(cId);
    assertThat(Nodes.heirOf(kv.pod(ManagedConfigs.toKv(c)).orElseThrow().pod())).isNull();
    assertThat(Nodes.busPort(kv.pod(ManagedConfigs.toKv(A)).orElseThrow().pod())).as("the bus port still reads")
        .isEqualTo(A.address().port());
    // A line that ends in a node that is not active names nobody.
    ClusterConfig ended = managed.toBuilder().pod(new PodEntry(new Pod(c, PodVersion.KV), PodStatus.GONE, 6)).build();
    assertThat(Nodes.heirOf(ManagedConfigs.toKv(ended).pod(ManagedConfigs.toKv(A)).orElseThrow().pod())).isNull();
  }

  @Test
  void aPodThatIsNotAKvNodeIsRefusedSayingWhy() {
    assertThatThrownBy(() -> ManagedConfigs.toKv(new PodId(new PodAddress("h", 10000), 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not a KV node")
        .hasMessageContaining("control port above 10000");
  }

  @Test
  void aManagerWithoutOneShardPerSlotIsRefusedNamingTheOption() {
    assertThatThrownBy(() -> ManagedConfigs.toKv(ClusterConfig.empty(300, ClusterId.random(new Random(1)))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 300 shards")
        .hasMessageContaining("--shards 16384");
  }

  @Test
  void theNodesViewIsTheManagersConfigRenamedWithEveryClaimEpochStatusAndTlsPort() {
    ClusterId id = ClusterId.random(new Random(2));
    ClusterConfig managed = ClusterConfig.empty(16384, id).toBuilder()
        .pod(new PodEntry(new Pod(A, new PodVersion("kv"), Pod.DEFAULT_ROLES, 7443), PodStatus.ACTIVE, 3))
        .pod(new PodEntry(new Pod(B, new PodVersion("kv")), PodStatus.ACTIVE, 4))
        .claim(0, Claim.stable(A, 3))
        .claim(16383, new Claim(B, SlotState.MIGRATING, A, 4))
        .claim(5, Claim.offline(2))
        .build();
    ClusterConfig kv = ManagedConfigs.toKv(managed);
    PodId a = ManagedConfigs.toKv(A);
    PodId b = ManagedConfigs.toKv(B);
    assertThat(kv.clusterId()).isEqualTo(id);
    assertThat(kv.size()).isEqualTo(16384);
    assertThat(kv.owner(0)).isEqualTo(a);
    assertThat(kv.epoch(0)).isEqualTo(3);
    assertThat(kv.claim(16383)).isEqualTo(new Claim(b, SlotState.MIGRATING, a, 4));
    assertThat(kv.claim(5)).isEqualTo(Claim.offline(2));
    assertThat(kv.owner(1)).isNull();
    PodEntry ea = kv.pod(a).orElseThrow();
    assertThat(ea.status()).isEqualTo(PodStatus.ACTIVE);
    assertThat(ea.epoch()).isEqualTo(3);
    // The control port stays the node's bus port and its TLS port travels in the version text.
    assertThat(ea.pod()).isEqualTo(Nodes.pod("10.0.0.1", 7000, 11, 17000, 7443));
    assertThat(Nodes.tlsPort(ea.pod())).isEqualTo(7443);
    assertThat(Nodes.tlsPort(kv.pod(b).orElseThrow().pod())).isZero();
    assertThat(kv.pods()).hasSize(2);
    // Every node derives the same view, hence the same Redis node ids.
    assertThat(ManagedConfigs.toKv(managed)).isEqualTo(kv);
  }
}
