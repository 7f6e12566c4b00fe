package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ManagerSettingsTest {

  final ManagerSettings d = ManagerSettings.defaults();

  @Test
  void defaultsAreTheSeedsValues() {
    assertThat(d.numberOfShards()).isEqualTo(300);
    assertThat(d.leaseTtl()).isEqualTo(Duration.ofSeconds(10));
    assertThat(d.leaseMargin()).isEqualTo(Duration.ofSeconds(2));
    assertThat(d.pingTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(d.terminationTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(d.rebalanceInterval()).isEqualTo(Duration.ofSeconds(20));
    assertThat(d.rebalanceRetryInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(d.limits()).isEqualTo(RebalanceLimits.DEFAULT);
  }

  @Test
  void theSizeOfASpaceAppendedAtRunTimeIsKeptByTheOtherWithersAndBounded() {
    assertThat(d.newSpaceShards()).isEqualTo(ManagerSettings.DEFAULT_NEW_SPACE_SHARDS);
    ManagerSettings s = d.withNewSpaceShards(0).withSpaces(io.atoll.core.Spaces.parse("default=4,worker=2"))
        .withLease(Duration.ofSeconds(1), Duration.ofMillis(50)).withNumberOfShards(9)
        .withAllocation(RebalanceLimits.UNLIMITED, AllocationStrategy.leastShard());
    assertThat(s.newSpaceShards()).isZero();
    assertThatThrownBy(() -> d.withNewSpaceShards(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("new-space-shards: -1 (expected: 0.." + ManagerSettings.MAX_SHARDS
            + "; 0 appends no space for a new role)");
    assertThatThrownBy(() -> d.withNewSpaceShards(ManagerSettings.MAX_SHARDS + 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("new-space-shards: 65537");
  }

  @Test
  void withersChangeOnlyTheirOwnValues() {
    AllocationStrategy s = AllocationStrategy.leastShard();
    ManagerSettings m = d.withNumberOfShards(7).withLease(Duration.ofSeconds(1), Duration.ofMillis(50))
        .withTimeouts(Duration.ofMillis(5), Duration.ofMillis(6))
        .withRebalanceIntervals(Duration.ofMillis(7), Duration.ofMillis(8))
        .withAllocation(RebalanceLimits.UNLIMITED, s);
    assertThat(m).isEqualTo(new ManagerSettings(7, Duration.ofSeconds(1), Duration.ofMillis(50), Duration.ofMillis(5),
        Duration.ofMillis(6), Duration.ofMillis(7), Duration.ofMillis(8), RebalanceLimits.UNLIMITED, s));
  }

  @Test
  void theStoreLeaseFollowsThePodLeaseUnlessSetAndIsBoundedByTheMargin() {
    assertThat(d.storeLease()).isEqualTo(d.leaseTtl());
    ManagerSettings s = d.withLease(Duration.ofSeconds(3), Duration.ofMillis(1000)).withStoreLease(Duration.ofSeconds(40));
    assertThat(s.storeLease()).isEqualTo(Duration.ofSeconds(40));
    assertThat(s.withLease(Duration.ofSeconds(2), Duration.ofMillis(500)).storeLease()).isEqualTo(Duration.ofSeconds(2));
    // 1 % drift over both leases must fit in the margin: 46 s + 3 s <= 49 x 1 s, 47 s + 3 s is not.
    assertThat(s.withStoreLease(Duration.ofSeconds(46)).storeLease()).isEqualTo(Duration.ofSeconds(46));
    assertThatThrownBy(() -> s.withStoreLease(Duration.ofSeconds(47)))
        .hasMessage("store-lease + lease-ttl: 47000 + 3000 ms (expected: <= 49 x lease-margin = 49000 ms, so that"
            + " the margin covers 1 % clock drift over both leases; shorten the store lease or widen the margin)");
    assertThatThrownBy(() -> d.withStoreLease(Duration.ofMillis(299)))
        .hasMessage("store-lease: 299 ms (expected: >= 300 ms)");
  }

  @Test
  void theShardCountIsBounded() {
    assertThat(d.withNumberOfShards(1).numberOfShards()).isEqualTo(1);
    assertThat(d.withNumberOfShards(ManagerSettings.MAX_SHARDS).numberOfShards()).isEqualTo(65_536);
    assertThatThrownBy(() -> d.withNumberOfShards(0)).hasMessage("shards: 0 (expected: 1..65536)");
    assertThatThrownBy(() -> d.withNumberOfShards(65_537)).hasMessage("shards: 65537 (expected: 1..65536)");
  }

  @Test
  void theLeaseIsAtLeast300MillisAndTheMarginAtLeastATwentiethOfIt() {
    Duration m = Duration.ofMillis(50);
    assertThat(d.withLease(Duration.ofMillis(300), m).leaseTtl()).isEqualTo(Duration.ofMillis(300));
    assertThatThrownBy(() -> d.withLease(Duration.ofMillis(299), m))
        .hasMessage("lease-ttl: 299 ms (expected: >= 300 ms)");
    assertThatThrownBy(() -> d.withLease(Duration.ZERO, m)).hasMessageStartingWith("lease-ttl: PT0S");
    assertThatThrownBy(() -> d.withLease(Duration.ofSeconds(1), Duration.ofMillis(-1)))
        .hasMessage("lease-margin: -1 ms (expected: >= 50 ms, a twentieth of the lease and at least 50 ms)");
    assertThatThrownBy(() -> d.withLease(Duration.ofSeconds(1), Duration.ZERO))
        .hasMessageStartingWith("lease-margin: 0 ms (expected: >= 50 ms");
    assertThatThrownBy(() -> d.withLease(Duration.ofSeconds(10), Duration.ofMillis(499)))
        .hasMessageStartingWith("lease-margin: 499 ms (expected: >= 500 ms");
    assertThat(d.withLease(Duration.ofSeconds(10), Duration.ofMillis(500)).leaseMargin()).isEqualTo(Duration.ofMillis(500));
    assertThatThrownBy(() -> d.withLease(Duration.ofSeconds(1), null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void everyDurationMustBePositive() {
    assertThatThrownBy(() -> d.withTimeouts(Duration.ZERO, Duration.ofSeconds(1)))
        .hasMessage("ping-timeout: PT0S (expected: > 0)");
    assertThatThrownBy(() -> d.withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(-1)))
        .hasMessage("termination-timeout: PT-1S (expected: > 0)");
    assertThatThrownBy(() -> d.withRebalanceIntervals(Duration.ZERO, Duration.ofSeconds(1)))
        .hasMessage("rebalance-interval: PT0S (expected: > 0)");
    assertThatThrownBy(() -> d.withRebalanceIntervals(Duration.ofSeconds(1), Duration.ZERO))
        .hasMessage("rebalance-retry-interval: PT0S (expected: > 0)");
    assertThatThrownBy(() -> d.withTimeouts(null, Duration.ofSeconds(1))).isInstanceOf(NullPointerException.class)
        .hasMessage("ping-timeout");
    assertThatThrownBy(() -> d.withAllocation(null, AllocationStrategy.versionAware()))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> d.withAllocation(RebalanceLimits.DEFAULT, null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void spaceSettingsOfARoleWithoutASpaceAreNamedSorted() {
    ManagerSettings s = d.withSpaceSettings(java.util.Map.of("worker", new SpaceSettings(1, null, null), "mailer",
        new SpaceSettings(2, null, null), "", new SpaceSettings(3, null, null)));
    assertThat(s.settingsWithoutSpace(io.atoll.core.Spaces.parse("default=10,worker=5"))).containsExactly("mailer");
    assertThat(s.settingsWithoutSpace(io.atoll.core.Spaces.parse("default=10,worker=5,mailer=2"))).isEmpty();
    assertThat(s.settingsWithoutSpace(io.atoll.core.Spaces.single(10))).containsExactly("mailer", "worker");
    assertThat(ShardManager.noSpaceYet("mailer")).isEqualTo("space-settings for role mailer: no such space yet");
    assertThat(ShardManager.noSpaceYet("")).isEqualTo("space-settings for role default: no such space yet");
  }
}
