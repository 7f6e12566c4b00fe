package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.core.ShardHasher;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.pods.Pods;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The type rule across a whole manager's start, on a virtual clock: the server answers calls
 * between {@link ShardManager#recover()} and {@link ShardManager#startServing()}, so the pods a
 * start inherits must be known as undeclared from the moment the store is read.
 */
class ShardManagerTypesTest {

  final VirtualTime vt = new VirtualTime();
  final MemoryStore store = new MemoryStore();
  final ManagerSettings settings = ManagerSettings.defaults()
      .withLease(TypeRuleTest.TTL, Duration.ofMillis(200));

  /** Pods that answer nothing: these tests look at membership only. */
  static final class SilentPods implements Pods {
    @Override
    public CompletableFuture<Boolean> ping(PodId pod, Duration timeout) {
      return CompletableFuture.completedFuture(false);
    }

    @Override
    public CompletableFuture<Set<Integer>> unassign(PodId pod, List<Integer> shards, long newEpoch,
        Duration termination, long term, Duration deadline) {
      return new CompletableFuture<>();
    }

    @Override
    public void push(PodId pod, ClusterConfig config, Duration deadline) {}

    @Override
    public void close() {}
  }

  ShardManager manager(VirtualTime.SimLoop l) {
    return new ShardManager(settings, store, PodHealth.LEASE_ONLY, new SilentPods(), l,
        vt.executor(1_000_000L, l::alive), vt.executor(1_000_000L, l::alive), vt, new Random(1), () -> {});
  }

  @Test
  void aRegisterHandledBeforeStartServingWaitsForThePodsTheStartInherited() {
    VirtualTime.SimLoop first = vt.newLoop();
    ShardManager m1 = manager(first);
    first.runAsLoop(() -> {
      m1.recover();
      m1.startServing();
    });
    Pod a = TypeRuleTest.pod(1);
    CompletableFuture<ClusterConfig> joined = m1.calls().register(a, TypeRuleTest.job("", ShardHasher.DEFAULT), "",
        false);
    vt.advance(Duration.ofMillis(50));
    assertThat(joined.join().isActive(a.id())).isTrue();
    first.shutdown(); // the manager's process dies; its store lease runs out
    vt.advance(settings.storeLease().multipliedBy(3));

    VirtualTime.SimLoop second = vt.newLoop();
    ShardManager m2 = manager(second);
    second.runAsLoop(m2::recover);
    // the server is up: a pod with another hasher registers before startServing runs
    Pod c = TypeRuleTest.pod(3);
    CompletableFuture<ClusterConfig> early = m2.calls().register(c, TypeRuleTest.job("", TypeRuleTest.OTHER), "",
        false);
    vt.advance(Duration.ZERO);
    second.runAsLoop(m2::startServing);
    vt.advance(Duration.ofMillis(50));
    MembershipTest.failsWith(early, PodTypes.Pending.class, "have not declared their types to it yet");
    // a then declares again, and c is refused for good
    CompletableFuture<ClusterConfig> again = m2.calls().register(a, TypeRuleTest.job("", ShardHasher.DEFAULT), "",
        false);
    vt.advance(Duration.ofMillis(50));
    assertThat(again.join().isActive(a.id())).isTrue();
    CompletableFuture<ClusterConfig> later = m2.calls().register(c, TypeRuleTest.job("", TypeRuleTest.OTHER), "",
        false);
    vt.advance(Duration.ofMillis(50));
    MembershipTest.failsWith(later, PodTypes.Refused.class, "entity type 'job'");
  }
}
