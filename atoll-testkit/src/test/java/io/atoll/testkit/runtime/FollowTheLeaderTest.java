package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.manager.StandbyServer;
import io.atoll.runtime.Sharding;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.testkit.LocalCluster;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Pods given several manager addresses find the leader through a standby's answer, and follow the
 * leadership when the standby takes over: real managers, a real standby server, real gRPC, a file
 * store. The standby's view of who leads is given by the test (what the store's lease names).
 */
class FollowTheLeaderTest {

  @Test
  void aPodStartedAtTheStandbyFindsTheLeaderAndFollowsATakeover() throws Exception {
    try (LocalCluster cluster = LocalCluster.builder().shards(12).podTemplate(new Counter.Pods()).start()) {
      PodAddress leader = cluster.managerAddress();
      long term = cluster.manager().term();
      // Who leads, as the store would say (the holder of the live lease is host:port).
      AtomicReference<Optional<AssignmentStore.Leader>> leads =
          new AtomicReference<>(Optional.of(new AssignmentStore.Leader(leader.toString(), term)));
      StandbyServer standby = StandbyServer.start("127.0.0.1", 0, leads::get);
      PodAddress standbyAt = standby.address();
      String both = standbyAt + "," + leader; // the standby first: the pod must be sent on
      Sharding a = cluster.adopt(cluster.podBuilder().manager(both).start());
      // Given the standby alone, a pod is sent on to the leader it names.
      Sharding b = cluster.adopt(cluster.podBuilder().manager(standbyAt.toString()).start());
      cluster.awaitSettled(Duration.ofSeconds(15));
      assertThat(a.servedShards().size() + b.servedShards().size()).isEqualTo(12);
      PodId aId = a.podId();
      PodId bId = b.podId();
      Set<Integer> aShards = Set.copyOf(a.servedShards());
      Set<Integer> bShards = Set.copyOf(b.servedShards());

      // The leader goes; the standby takes over on its own address.
      cluster.stopManager();
      leads.set(Optional.empty());
      standby.close();
      cluster.startManager(standbyAt.port());
      assertThat(cluster.manager().term()).isGreaterThan(term);
      assertThat(cluster.managerAddress()).isEqualTo(standbyAt);

      // The new leader signs with the cluster's key (kept in the store), so the pods' credentials
      // still hold: for two leases, they renew as the same incarnations and keep their shards.
      Duration lease = cluster.manager().settings().leaseTtl();
      Awaitility.await().during(lease.multipliedBy(2)).atMost(lease.multipliedBy(4)).until(() ->
          a.podId().equals(aId) && b.podId().equals(bId) && a.holdsLease() && b.holdsLease()
              && Set.copyOf(a.servedShards()).equals(aShards) && Set.copyOf(b.servedShards()).equals(bShards));
      assertThat(cluster.manager().config().activePods()).extracting(p -> p.id()).containsExactlyInAnyOrder(aId, bId);

      // The pods renew with the new leader (it counts them as alive from its start), keep their
      // shards, and a pod that joins after the takeover gets its share: the first rebalance works.
      Sharding c = cluster.adopt(cluster.podBuilder().manager(leader + "," + standbyAt).start());
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> c.servedShards().size() >= 3
          && a.servedShards().size() + b.servedShards().size() + c.servedShards().size() == 12);
      Set<Integer> seen = new HashSet<>();
      for (Sharding p : List.of(a, b, c)) {
        assertThat(p.holdsLease()).isTrue();
        for (int s : p.servedShards()) {
          assertThat(seen.add(s)).as("shard %d served once", s).isTrue();
        }
      }
      assertThat(cluster.manager().config().activePods()).hasSize(3);
      for (int i = 0; i < 12; i++) {
        a.entity(Counter.TYPE, "f-" + i).tell(new Counter.Add(1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
      }
    }
  }
}
