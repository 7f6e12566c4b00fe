package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.testkit.net.TcpRelay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Leases: a pod cut off from a manager that is alive for others fences itself before its shards move. */
@AtollCluster(shards = 20, podTemplate = Counter.Pods.class)
class LeaseTest {

  /** Shard starts and stops of every pod, in one order; flags a shard served by two pods. */
  static final class Timeline {
    final List<String> violations = new ArrayList<>();
    final Map<Integer, Set<String>> serving = new HashMap<>();

    ShardingObserver observer(String pod, AtomicBoolean fenced) {
      return new ShardingObserver() {
        @Override
        public void shardActivated(int shard, long epoch) {
          synchronized (Timeline.this) {
            Set<String> s = serving.computeIfAbsent(shard, k -> new HashSet<>());
            if (!s.isEmpty() && !s.contains(pod)) {
              violations.add("shard " + shard + " started on " + pod + " while served by " + s);
            }
            s.add(pod);
          }
        }

        @Override
        public void shardReleased(int shard) {
          synchronized (Timeline.this) {
            serving.getOrDefault(shard, new HashSet<>()).remove(pod);
          }
        }

        @Override
        public void fenced() {
          fenced.set(true);
        }
      };
    }
  }

  @Test
  void aPodThatTheLiveManagerRefusesFencesItselfAndItsShardsMoveOnlyAfterwards(LocalCluster cluster) throws Exception {
    Timeline timeline = new Timeline();
    AtomicBoolean aFenced = new AtomicBoolean();
    try (TcpRelay relay = TcpRelay.to(cluster.managerAddress().port())) {
      // Pod a reaches the manager only through the relay; pod b directly.
      Sharding a = cluster.addPod(x -> x.manager(relay.address()).observer(timeline.observer("a", aFenced)));
      Sharding b = cluster.addPod(x -> x.observer(timeline.observer("b", new AtomicBoolean())));
      cluster.awaitSettled(Duration.ofSeconds(10));
      PodId aId = a.podId();
      relay.close(); // the manager now refuses a, and only a
      Awaitility.await().atMost(Duration.ofSeconds(15)).until(() ->
          cluster.manager().config().pod(aId).map(e -> e.status() == PodStatus.GONE).orElse(false));
      assertThat(aFenced).as("pod a fenced itself").isTrue();
      cluster.awaitSettled(Duration.ofSeconds(15));
      assertThat(b.servedShards()).hasSize(20);
      synchronized (timeline) {
        assertThat(timeline.violations).isEmpty();
      }
    }
  }

  @Test
  void aPodWhoseConnectionToItsOnlyManagerWentSilentConnectsAfreshAndStaysServedWithoutWaitingForKeepalive(
      LocalCluster cluster) throws Exception {
    try (TcpRelay relay = TcpRelay.to(cluster.managerAddress().port())) {
      Sharding a = cluster.addPod(x -> x.manager(relay.address()));
      cluster.addPod(x -> x);
      cluster.awaitSettled(Duration.ofSeconds(10));
      Set<Integer> stuck = relay.clientPorts();
      assertThat(stuck).isNotEmpty();
      // Its connection to the manager loses every byte from now, without a reset: a transport
      // stuck as a connection that never completes or a half-open one is. Keepalive would notice
      // after 15 s (10 s and a 5 s timeout), ten leases. New connections pass.
      relay.mode(TcpRelay.Mode.DROP, stuck::contains);
      // A fresh connection that stays open (the lease watch's probes also connect, for an instant).
      Map<Integer, Long> firstSeen = new java.util.concurrent.ConcurrentHashMap<>();
      Awaitility.await("pod a connected afresh to the manager, a member of the cluster")
          .atMost(Duration.ofSeconds(8)).pollInterval(Duration.ofMillis(50)).until(() -> {
            long now = System.nanoTime();
            Set<Integer> open = relay.clientPorts();
            firstSeen.keySet().retainAll(open);
            open.stream().filter(p -> !stuck.contains(p)).forEach(p -> firstSeen.putIfAbsent(p, now));
            boolean lasting = firstSeen.values().stream().anyMatch(t -> now - t >= 300_000_000L);
            return lasting && cluster.manager().config().pod(a.podId()).map(e -> e.status() == PodStatus.ACTIVE)
                .orElse(false);
          });
      cluster.awaitSettled(Duration.ofSeconds(15));
      assertThat(a.servedShards()).as("pod a serves shards again").isNotEmpty();
    }
  }

  @Test
  void aPodWhoseFirstConnectionToItsOnlyManagerHangsStartsOnAFreshOneWithinItsStartTimeout(
      LocalCluster cluster) throws Exception {
    try (TcpRelay relay = TcpRelay.to(cluster.managerAddress().port())) {
      // The first connection that carries a byte loses every byte, both ways, without a reset: the
      // pod's first read of the config waits on a connection that never completes. Later ones pass.
      java.util.concurrent.atomic.AtomicInteger first = new java.util.concurrent.atomic.AtomicInteger();
      relay.mode(TcpRelay.Mode.DROP, port -> first.compareAndSet(0, port) || first.get() == port);
      // Each read has a 2 s deadline; a channel silent for two of them is replaced. Without that,
      // the start waits on the hanging connection until its timeout (12 s here) and fails.
      Sharding a = cluster.addPod(x -> x.manager(relay.address()).startTimeout(Duration.ofSeconds(12)));
      assertThat(first.get()).as("the hanging connection was made").isPositive();
      cluster.awaitSettled(Duration.ofSeconds(15));
      assertThat(a.servedShards()).as("the pod serves shards").isNotEmpty();
    }
  }
}
