package io.atoll.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** One default space: the strategy's own decision, and only over pods that host the default role. */
class SpacedAllocationExamplesTest {

  static Pod pod(int port, List<String> roles) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", port), 1), PodVersion.of("1"), roles);
  }

  @Test
  void oneDefaultSpaceWithDefaultPodsIsTheStrategysOwnDecision() {
    ClusterConfig c = ClusterConfig.empty(6);
    List<Pod> pods = List.of(pod(7001, Pod.DEFAULT_ROLES), pod(7002, Pod.DEFAULT_ROLES));
    AllocationStrategy s = AllocationStrategy.versionAware();
    List<Move> moves = SpacedAllocation.decide(s, c, pods, RebalanceLimits.UNLIMITED, new SplittableRandom(1));
    assertThat(moves).hasSize(6)
        .isEqualTo(s.decide(c, pods, RebalanceLimits.UNLIMITED, new SplittableRandom(1)));
  }

  @Test
  void aPodThatHostsOnlyAnotherRoleGetsNoShardOfTheDefaultSpace() {
    ClusterConfig c = ClusterConfig.empty(6);
    Pod host = pod(7001, Pod.DEFAULT_ROLES);
    Pod worker = pod(7002, List.of("worker"));
    for (List<Pod> pods : List.of(List.of(host, worker), List.of(worker, host))) {
      List<Move> moves = SpacedAllocation.decide(AllocationStrategy.versionAware(), c, pods, RebalanceLimits.UNLIMITED,
          new SplittableRandom(1));
      assertThat(moves).hasSize(6).allSatisfy(m -> assertThat(m.to()).isEqualTo(host.id()));
    }
  }
}
