package io.atoll.manager.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Each observer call moves its meter, and only its own: the binder alone, on a mock clock. */
class ManagerMetricsUnitTest {

  final MockClock clock = new MockClock();
  final SimpleMeterRegistry r = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
  final ManagerMetrics m = new ManagerMetrics(r);

  static final PodId A = new PodId(new PodAddress("127.0.0.1", 7001), 1);
  static final PodId B = new PodId(new PodAddress("127.0.0.1", 7002), 1);
  static final PodId C = new PodId(new PodAddress("127.0.0.1", 7003), 1);

  double count(String name, String tag, String value) {
    return r.get(name).tag(tag, value).counter().count();
  }

  @Test
  void theGaugesReadTheInstalledConfigAndZeroBeforeAny() {
    assertThat(r.get("atoll.manager.pods.active").gauge().value()).isZero();
    assertThat(r.get("atoll.manager.epoch").gauge().value()).isZero();
    ClusterConfig c = ClusterConfig.empty(4).toBuilder()
        .pod(new PodEntry(new Pod(A, PodVersion.of("1")), PodStatus.ACTIVE, 1))
        .pod(new PodEntry(new Pod(B, PodVersion.of("1")), PodStatus.ACTIVE, 1))
        .pod(new PodEntry(new Pod(C, PodVersion.of("1")), PodStatus.GONE, 1))
        .claim(0, Claim.stable(A, 3)).claim(1, Claim.stable(A, 3)).claim(2, Claim.stable(A, 3))
        .build();
    m.configInstalled(c);
    assertThat(r.get("atoll.manager.pods.active").gauge().value()).isEqualTo(2);
    assertThat(r.get("atoll.manager.epoch").gauge().value()).isEqualTo(c.epoch()).isPositive();
    assertThat(r.get("atoll.manager.shards").tag("pod", A.toString()).gauge().value()).isEqualTo(3);
    assertThat(r.get("atoll.manager.shards").tag("pod", B.toString()).gauge().value()).as("active, owns none")
        .isZero();
    assertThat(r.find("atoll.manager.shards").tag("pod", C.toString()).gauge()).as("gone: no gauge").isNull();
  }

  @Test
  void renewalsAndDeparturesCountByTheirVerdictAndCause() {
    m.leaseRenewal(A, true);
    m.leaseRenewal(A, true);
    m.leaseRenewal(B, false);
    m.podGone(A, false);
    m.podGone(B, true);
    m.podGone(C, true);
    assertThat(count("atoll.manager.lease.renewals", "result", "granted")).isEqualTo(2);
    assertThat(count("atoll.manager.lease.renewals", "result", "refused")).isEqualTo(1);
    assertThat(count("atoll.manager.pods.gone", "cause", "left")).isEqualTo(1);
    assertThat(count("atoll.manager.pods.gone", "cause", "died")).isEqualTo(2);
  }

  @Test
  void roundsCountAsMovedIdleOrFailedAndTheirDurationsAreTimed() {
    clock.add(Duration.ofSeconds(1)); // a monotonic time of 0 means "no round began"
    m.roundStarted();
    clock.add(Duration.ofMillis(30));
    m.roundFinished(3, false);
    m.roundStarted();
    clock.add(Duration.ofMillis(10));
    m.roundFinished(0, false);
    m.roundStarted();
    m.roundFinished(2, true);
    m.roundFinished(0, false); // no round began: counted, not timed
    assertThat(count("atoll.manager.rebalance.rounds", "result", "moved")).isEqualTo(1);
    assertThat(count("atoll.manager.rebalance.rounds", "result", "idle")).isEqualTo(2);
    assertThat(count("atoll.manager.rebalance.rounds", "result", "failed")).isEqualTo(1);
    assertThat(r.get("atoll.manager.rebalance.shards.moved").counter().count()).isEqualTo(5);
    var timer = r.get("atoll.manager.rebalance.duration").timer();
    assertThat(timer.count()).isEqualTo(3);
    assertThat(timer.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(40);
  }
}
