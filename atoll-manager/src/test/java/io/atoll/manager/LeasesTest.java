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
}
