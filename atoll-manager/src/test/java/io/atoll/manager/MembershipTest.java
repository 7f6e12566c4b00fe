package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.round.Rounds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** Membership and leases on a virtual clock, with saves that take 5 ms. */
class MembershipTest {

  static final Pod A = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1"));
  static final Duration TTL = Duration.ofMillis(1000);

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();
  final Journal journal = new Journal(store, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt, 2,
      c -> {}, e -> {});
  final List<String> rebalances = new ArrayList<>();
  volatile PodHealth.Verdict verdict = PodHealth.Verdict.UNKNOWN;
  final Membership membership = new Membership(journal, new Leases(TTL, Duration.ofMillis(200), Duration.ofHours(1)), p -> verdict, loop,
      vt.executor(0, () -> true), vt, rebalances::add);

  <T> T onLoop(Supplier<T> s) {
    Object[] out = new Object[1];
    loop.runAsLoop(() -> out[0] = s.get());
    @SuppressWarnings("unchecked")
    T t = (T) out[0];
    return t;
  }

  ClusterConfig installed() {
    return onLoop(journal::config);
  }

  void joinA() {
    onLoop(() -> journal.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> f = onLoop(() -> membership.register(A));
    vt.advance(Duration.ofMillis(10));
    assertThat(f.join().isActive(A.id())).isTrue();
  }

  @Test
  void aRegistrationIsSavedThenAsksForARebalance() {
    joinA();
    assertThat(rebalances).containsExactly("pod " + A.id() + " joined");
    CompletableFuture<ClusterConfig> again = onLoop(() -> membership.register(A));
    assertThat(again.join()).isSameAs(installed());
    assertThat(rebalances).hasSize(1);
  }

  @Test
  void aPodBeingDeclaredGoneIsRefusedRenewalsAndRegistrationBeforeTheSave() {
    joinA();
    CompletableFuture<ClusterConfig> gone = onLoop(() -> membership.markGone(A.id(), "left"));
    assertThat(gone).isNotDone();
    assertThat((boolean) onLoop(() -> membership.renew(A.id()))).isFalse();
    CompletableFuture<ClusterConfig> reg = onLoop(() -> membership.register(A));
    assertThat(reg).isCompletedExceptionally();
    vt.advance(Duration.ofMillis(10));
    assertThat(gone.join().isActive(A.id())).isFalse();
    assertThat(rebalances).containsExactly("pod " + A.id() + " joined", "pod " + A.id() + " left");
    assertThat((boolean) onLoop(() -> membership.renew(A.id()))).isFalse();
    assertThat(onLoop(() -> membership.markGone(A.id(), "left"))).isCompletedWithValue(installed());
  }

  @Test
  void aSilentPodIsDeclaredDeadAfterTheLeaseAndMarginOnly() {
    joinA();
    vt.advance(Duration.ofMillis(1190));
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
    assertThat((boolean) onLoop(() -> membership.renew(A.id()))).isTrue();
    vt.advance(Duration.ofMillis(1201));
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isFalse();
    assertThat(rebalances).last().asString().endsWith("died");
  }

  @Test
  void aStartGrantsEveryKnownPodALeaseFromThatMoment() {
    joinA();
    vt.advance(Duration.ofSeconds(5));
    loop.runAsLoop(() -> membership.grantAll(TTL.plus(Duration.ofMillis(200)).toNanos()));
    vt.advance(Duration.ofMillis(1100));
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
  }

  @Test
  void theHealthSourceMayDeclareAPodGoneOnlyWithProofAndNotAfterClose() {
    joinA();
    membership.reportUnhealthy(A.id(), null);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
    verdict = PodHealth.Verdict.GONE;
    loop.runAsLoop(membership::close);
    membership.reportUnhealthy(A.id(), null);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).as("closed").isTrue();
  }

  @Test
  void aPodProvenGoneIsMarkedGone() {
    joinA();
    verdict = PodHealth.Verdict.GONE;
    loop.runAsLoop(() -> membership.suspect(java.util.Set.of(A.id())));
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isFalse();
    assertThat(rebalances).last().asString().endsWith("died");
  }

  @Test
  void aHealthSourceThatThrowsCountsAsUnknown() {
    Membership m = new Membership(journal, new Leases(TTL, Duration.ZERO, Duration.ofHours(1)), p -> {
      throw new IllegalStateException("health source down");
    }, loop, vt.executor(0, () -> true), vt, rebalances::add);
    onLoop(() -> journal.recover(UnaryOperator.identity()));
    onLoop(() -> m.register(A));
    vt.advance(Duration.ofMillis(10));
    m.reportUnhealthy(A.id(), A.id());
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
    assertThat(Rounds.leave(installed(), A.id()).isActive(A.id())).isFalse();
  }
}
