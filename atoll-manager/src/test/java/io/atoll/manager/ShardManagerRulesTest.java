package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.manager.round.Rounds;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The manager's small rules that need no loop: its timer periods, wildcard hosts, shard counts. */
class ShardManagerRulesTest {

  static ManagerSettings lease(long millis) {
    return ManagerSettings.defaults().withLease(Duration.ofMillis(millis), Duration.ofMillis(millis / 2));
  }

  static long tick(long leaseMillis) {
    return ShardManager.deadPodTick(lease(leaseMillis)).toMillis();
  }

  static long stall(long leaseMillis) {
    return ShardManager.stallThreshold(lease(leaseMillis)).toMillis();
  }

  @Test
  void deadPodsAreLookedForEveryEighthOfTheLeaseWithin50To500Ms() {
    assertThat(tick(300)).isEqualTo(50);
    assertThat(tick(400)).isEqualTo(50);
    assertThat(tick(408)).isEqualTo(51);
    assertThat(tick(800)).isEqualTo(100);
    assertThat(tick(3_992)).isEqualTo(499);
    assertThat(tick(4_000)).isEqualTo(500);
    assertThat(tick(4_008)).isEqualTo(500);
    assertThat(tick(60_000)).isEqualTo(500);
  }

  @Test
  void aStallIsOneTickPlusAQuarterOfTheLease() {
    assertThat(stall(300)).as("tick 50 + quarter 75").isEqualTo(125);
    assertThat(stall(800)).as("tick 100 + quarter 200").isEqualTo(300);
    assertThat(stall(4_000)).as("tick 500 + quarter 1000").isEqualTo(1_500);
    assertThat(stall(60_000)).as("tick 500 + quarter 15000").isEqualTo(15_500);
  }

  @Test
  void wildcardHostsNameEveryAddressOfTheMachine() {
    for (String w : new String[] {"0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0", "[0:0:0:0:0:0:0:0]", "*"}) {
      assertThat(ShardManager.isWildcard(w)).as(w).isTrue();
    }
    for (String h : new String[] {"127.0.0.1", "[::1]", "localhost", "", "[::x", "x::]", "0.0.0.0.", "[*"}) {
      assertThat(ShardManager.isWildcard(h)).as(h).isFalse();
    }
  }

  @Test
  void shardCountsListEveryActivePodByAddressAndNoGonePod() {
    Pod a = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1.0"));
    Pod b = new Pod(new PodId(new PodAddress("127.0.0.1", 7002), 2), PodVersion.of("1.0"));
    Pod c = new Pod(new PodId(new PodAddress("127.0.0.1", 7003), 3), PodVersion.of("1.0"));
    ClusterConfig config = Rounds.join(Rounds.join(Rounds.join(ClusterConfig.empty(4), a), b), c);
    config = Rounds.leave(config, c.id());
    assertThat(ShardManager.shardCounts(config))
        .containsExactly(java.util.Map.entry(a.id().toString(), 0), java.util.Map.entry(b.id().toString(), 0));
  }
}
