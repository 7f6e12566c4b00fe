package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.manager.round.Rounds;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeasesTest {

  static final Pod A = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1"));
  static final Pod B = new Pod(new PodId(new PodAddress("127.0.0.1", 7002), 1), PodVersion.of("1"));
  static final long MS = 1_000_000L;

  final Leases leases = new Leases(Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofSeconds(1));
  final ClusterConfig config = Rounds.join(Rounds.join(ClusterConfig.empty(1), A), B);

  @Test
  void aPodIsFoundDeadOnlyAfterTheLeaseAndTheMarginAndOnlyOnce() {
    leases.grant(A.id(), 0);
    assertThat(leases.expired(List.of(A), 120 * MS)).isEmpty();
    assertThat(leases.expired(List.of(A), 120 * MS + 1)).containsExactly(new Leases.Expired(A.id(), 120 * MS + 1));
    assertThat(leases.expired(List.of(A), 200 * MS)).as("not twice while its removal is saved").isEmpty();
    assertThat(leases.expired(List.of(A), 241 * MS)).hasSize(1);
  }

  @Test
  void aRenewalMovesTheDeadlineFromWhenItWasGranted() {
    leases.grant(A.id(), 0);
    assertThat(leases.renew(A.id(), config, 100 * MS)).isTrue();
    assertThat(leases.expired(List.of(A), 220 * MS)).isEmpty();
    assertThat(leases.expired(List.of(A), 221 * MS)).hasSize(1);
  }

  @Test
  void aPodWithoutAGrantGetsOneWhenFirstSeen() {
    assertThat(leases.expired(List.of(A, B), 1000 * MS)).isEmpty();
    assertThat(leases.expired(List.of(A, B), 1120 * MS)).isEmpty();
    assertThat(leases.expired(List.of(A, B), 1121 * MS)).extracting(Leases.Expired::pod)
        .containsExactly(A.id(), B.id());
  }

  @Test
  void onlyActivePodsThatAreNotDyingAreRenewed() {
    assertThat(leases.renew(A.id(), ClusterConfig.empty(1), 0)).isFalse();
    assertThat(leases.renew(A.id(), Rounds.leave(config, A.id()), 0)).isFalse();
    leases.dying(A.id());
    assertThat(leases.isDying(A.id())).isTrue();
    assertThat(leases.renew(A.id(), config, 0)).isFalse();
    leases.gone(A.id());
    assertThat(leases.isDying(A.id())).isFalse();
    assertThat(leases.renew(B.id(), config, 0)).isTrue();
  }

  @Test
  void aGonePodIsForgotten() {
    leases.grant(A.id(), 0);
    leases.gone(A.id());
    assertThat(leases.expired(List.of(A), 500 * MS)).as("granted afresh when seen again").isEmpty();
  }

  @Test
  void aJumpOfEightSecondsWithRenewalsRightAfterDeclaresNobodyDead() {
    // A 1 s lease, 200 ms margin, checks every 125 ms; a gap over 375 ms is a pause of the manager.
    Leases l = new Leases(Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofMillis(375));
    l.grant(A.id(), 0);
    l.grant(B.id(), 0);
    for (long t = 125; t <= 500; t += 125) {
      assertThat(l.expired(List.of(A, B), t * MS)).isEmpty();
    }
    Leases.Check resumed = l.check(List.of(A, B), 8_500 * MS); // SIGSTOP for 8 s, then SIGCONT
    assertThat(resumed.dead()).as("the pause is not charged to the pods").isEmpty();
    assertThat(resumed.stalledNanos()).isEqualTo(8_000 * MS);
    assertThat(l.renew(A.id(), config, 8_510 * MS)).as("the renewals queued during the pause").isTrue();
    assertThat(l.renew(B.id(), config, 8_511 * MS)).isTrue();
    for (long t = 8_625; t <= 9_700; t += 125) {
      assertThat(l.expired(List.of(A, B), t * MS)).isEmpty();
    }
  }

  @Test
  void afterAPauseASilentPodIsDeadOneLeaseAfterTheResume() {
    Leases l = new Leases(Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofMillis(375));
    l.grant(A.id(), 0);
    l.grant(B.id(), 0);
    assertThat(l.expired(List.of(A, B), 100 * MS)).isEmpty();
    assertThat(l.expired(List.of(A, B), 8_000 * MS)).isEmpty();
    // B had used 100 ms of its 1.2 s before the pause; the 7.9 s pause is not charged to it.
    for (long t = 8_100; t <= 9_100; t += 100) {
      l.renew(A.id(), config, t * MS);
      assertThat(l.expired(List.of(A, B), t * MS)).isEmpty();
    }
    assertThat(l.expired(List.of(A, B), 9_101 * MS)).extracting(Leases.Expired::pod).containsExactly(B.id());
  }

  @Test
  void repeatedPausesDoNotPostponeFindingADeadPod() {
    // A 1 s lease, 200 ms margin, checks every 125 ms, a gap over 375 ms is a pause. The manager
    // runs 500 ms, then pauses 500 ms, over and over: A, silent from the start, must be found
    // dead once it has been silent for 1.2 s of the manager's running time, not never.
    Leases l = new Leases(Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofMillis(375));
    l.grant(A.id(), 0);
    long t = 0;
    long running = 0;
    long foundAt = -1;
    for (int cycle = 0; cycle < 20 && foundAt < 0; cycle++) {
      for (int i = 0; i < 4 && foundAt < 0; i++) {
        t += 125;
        running += 125;
        Leases.Check c = l.check(List.of(A), t * MS);
        assertThat(c.stalledNanos()).isZero();
        if (!c.dead().isEmpty()) {
          foundAt = running;
        }
      }
      if (foundAt < 0) {
        t += 500;
        Leases.Check c = l.check(List.of(A), t * MS);
        assertThat(c.stalledNanos()).as("the pause is noticed").isEqualTo(500 * MS);
        assertThat(c.dead()).as("nobody is judged by the check that noticed a pause").isEmpty();
      }
    }
    assertThat(foundAt).as("found dead after 1.2 s of running time (checks every 125 ms)").isEqualTo(1_250);
  }

  @Test
  void aRenewalUnderAShorterLeaseNeverShortensAnInheritedWait() {
    Leases l = new Leases(Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofSeconds(10));
    l.grant(A.id(), 0, 3_000 * MS); // a start that inherited a 3 s lease (and margin) from the last term
    assertThat(l.renew(A.id(), config, 50 * MS)).isTrue(); // the pod now renews under 100 ms...
    for (long t = 500; t <= 3_000; t += 500) {
      assertThat(l.expired(List.of(A), t * MS)).as("...but may still hold the old lease at %d ms", t).isEmpty();
    }
    assertThat(l.expired(List.of(A), 3_001 * MS)).hasSize(1);
  }

  @Test
  void grantsOfPodsNoLongerActiveAreForgotten() {
    leases.grant(A.id(), 0);
    leases.grant(B.id(), 0);
    leases.dying(B.id());
    assertThat(leases.expired(List.of(A), 10 * MS)).isEmpty();
    assertThat(leases.size()).isEqualTo(1);
    assertThat(leases.isDying(B.id())).isFalse();
  }

  @Test
  void aChecksSilenceCountsFromTheLastRenewal() {
    leases.grant(A.id(), 0);
    assertThat(leases.renew(A.id(), config, 50 * MS)).isTrue();
    assertThat(leases.expired(List.of(A), 171 * MS)).containsExactly(new Leases.Expired(A.id(), 121 * MS));
  }

  @Test
  void aGapOfExactlyTheStallThresholdIsNoPauseAndOneNanosecondMoreIs() {
    leases.grant(A.id(), 0);
    leases.grant(B.id(), 0);
    assertThat(leases.check(List.of(A, B), 0).stalledNanos()).isZero();
    assertThat(leases.pausedAt(1000 * MS)).isFalse();
    assertThat(leases.pausedAt(1000 * MS + 1)).isTrue();
    Leases.Check atThreshold = leases.check(List.of(A, B), 1000 * MS);
    assertThat(atThreshold.stalledNanos()).isZero();
    assertThat(atThreshold.dead()).as("silent for 1 s, judged: no pause").hasSize(2);
    Leases l = new Leases(Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofSeconds(1));
    l.grant(A.id(), 0);
    l.check(List.of(A), 0);
    Leases.Check late = l.check(List.of(A), 1000 * MS + 1);
    assertThat(late.stalledNanos()).isEqualTo(1000 * MS + 1);
    assertThat(late.dead()).as("the check that noticed the pause judges nobody").isEmpty();
    assertThat(l.pausedAt(2000 * MS + 1)).as("counted from the last check").isFalse();
    assertThat(l.pausedAt(2000 * MS + 2)).isTrue();
  }

  @Test
  void aDyingPodThatIsStillActiveStaysDyingThroughAChecks() {
    leases.grant(A.id(), 0);
    leases.grant(B.id(), 0);
    leases.dying(A.id());
    leases.dying(B.id());
    leases.check(List.of(A), 10 * MS); // B is no longer active: forgotten; A's removal is not saved yet
    assertThat(leases.isDying(A.id())).isTrue();
    assertThat(leases.renew(A.id(), config, 20 * MS)).isFalse();
    assertThat(leases.isDying(B.id())).isFalse();
  }
}
