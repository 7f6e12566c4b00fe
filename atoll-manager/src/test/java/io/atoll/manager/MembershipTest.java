package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** Membership and leases on a virtual clock, with saves that take 5 ms. */
class MembershipTest {

  static final Pod A = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1"));
  static final Pod B = new Pod(new PodId(new PodAddress("127.0.0.1", 7002), 2), PodVersion.of("1"));
  static final Pod C = new Pod(new PodId(new PodAddress("127.0.0.1", 7003), 3), PodVersion.of("1"));
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

  ClusterConfig installed() {
    return loop.callAsLoop(journal::config);
  }

  void joinA() {
    loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> f = loop.callAsLoop(() -> membership.register(A));
    vt.advance(Duration.ofMillis(10));
    assertThat(f.join().isActive(A.id())).isTrue();
  }

  @Test
  void aRegistrationIsSavedThenAsksForARebalance() {
    joinA();
    assertThat(rebalances).containsExactly("pod " + A.id() + " joined");
    CompletableFuture<ClusterConfig> again = loop.callAsLoop(() -> membership.register(A));
    assertThat(again.join()).isSameAs(installed());
    assertThat(rebalances).hasSize(1);
  }

  @Test
  void theTypesAPodDeclaresAreKeptWithItAndNameItsSpaceOnceNoLivePodHostsIt() {
    joinA();
    Pod batch = new Pod(new PodId(new PodAddress("127.0.0.1", 7004), 4), PodVersion.of("1"), List.of("batch"));
    CompletableFuture<ClusterConfig> f = loop.callAsLoop(() -> membership.register(batch,
        new java.util.TreeMap<>(java.util.Map.of("Report", io.atoll.core.TypeDeclaration.roleOnly("batch"), "Job",
            io.atoll.core.TypeDeclaration.roleOnly("batch"))), "", false));
    vt.advance(Duration.ofMillis(10));
    ClusterConfig joined = f.join();
    assertThat(loop.callAsLoop(() -> membership.unhostedReports(joined))).isEmpty();
    assertThat(loop.callAsLoop(membership::entityTypes)).containsExactly(
        java.util.Map.entry("Job", io.atoll.core.TypeDeclaration.roleOnly("batch")),
        java.util.Map.entry("Report", io.atoll.core.TypeDeclaration.roleOnly("batch")));
    CompletableFuture<ClusterConfig> gone = loop.callAsLoop(() -> membership.markGone(batch.id(), "left"));
    vt.advance(Duration.ofMillis(10));
    ClusterConfig after = gone.join();
    assertThat(loop.callAsLoop(() -> membership.unhostedReports(after)))
        .containsExactly("space batch: 100 shards, no live pod with role batch (types: Job, Report)");
    // A pod that declared none (an older one) leaves its space reported by the role alone.
    Pod old = new Pod(new PodId(new PodAddress("127.0.0.1", 7005), 5), PodVersion.of("1"), List.of("old"));
    CompletableFuture<ClusterConfig> g = loop.callAsLoop(() -> membership.register(old));
    vt.advance(Duration.ofMillis(10));
    g.join();
    loop.callAsLoop(() -> membership.markGone(old.id(), "left"));
    vt.advance(Duration.ofMillis(10));
    assertThat(loop.callAsLoop(() -> membership.unhostedReports(installed()))).containsExactly(
        "space batch: 100 shards, no live pod with role batch (types: Job, Report)",
        "space old: 100 shards, no live pod with role old");
  }

  @Test
  void aPodOfANewRoleIsRefusedWhileAnAtollKvNodeIsAMemberAndNothingGrows() {
    loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
    Pod kv = new Pod(new PodId(new PodAddress("127.0.0.1", 7006), 6), PodVersion.KV);
    CompletableFuture<ClusterConfig> f = loop.callAsLoop(() -> membership.register(kv));
    vt.advance(Duration.ofMillis(10));
    ClusterConfig before = f.join();
    Pod batch = new Pod(new PodId(new PodAddress("127.0.0.1", 7007), 7), PodVersion.of("1"), List.of("batch"));
    CompletableFuture<ClusterConfig> refused = loop.callAsLoop(() -> membership.register(batch));
    vt.advance(Duration.ofMillis(10));
    assertThatThrownBy(refused::join).hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("pod " + batch.id() + " refused: space 'batch': this manager serves Atoll KV nodes (pod "
            + kv.id() + "), which follow only the one slot space (expected: pods of other roles at a manager of their"
            + " own");
    assertThat(installed()).isEqualTo(before);
    // A default-role pod needs no new space: accepted as before.
    CompletableFuture<ClusterConfig> plain = loop.callAsLoop(() -> membership.register(B));
    vt.advance(Duration.ofMillis(10));
    assertThat(plain.join().isActive(B.id())).isTrue();
    assertThat(plain.join().spaces()).isEqualTo(before.spaces());
  }

  @Test
  void aPodBeingDeclaredGoneIsRefusedRenewalsAndRegistrationBeforeTheSave() {
    joinA();
    CompletableFuture<ClusterConfig> gone = loop.callAsLoop(() -> membership.markGone(A.id(), "left"));
    assertThat(gone).isNotDone();
    assertThat((boolean) loop.callAsLoop(() -> membership.renew(A.id()))).isFalse();
    CompletableFuture<ClusterConfig> reg = loop.callAsLoop(() -> membership.register(A));
    assertThat(reg).isCompletedExceptionally();
    vt.advance(Duration.ofMillis(10));
    assertThat(gone.join().isActive(A.id())).isFalse();
    assertThat(rebalances).containsExactly("pod " + A.id() + " joined", "pod " + A.id() + " left");
    assertThat((boolean) loop.callAsLoop(() -> membership.renew(A.id()))).isFalse();
    assertThat(loop.callAsLoop(() -> membership.markGone(A.id(), "left"))).isCompletedWithValue(installed());
  }

  @Test
  void aSilentPodIsDeclaredDeadAfterTheLeaseAndMarginOnly() {
    joinA();
    vt.advance(Duration.ofMillis(1190));
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
    assertThat((boolean) loop.callAsLoop(() -> membership.renew(A.id()))).isTrue();
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
    loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
    loop.callAsLoop(() -> m.register(A));
    vt.advance(Duration.ofMillis(10));
    m.reportUnhealthy(A.id(), A.id());
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
    assertThat(Rounds.leave(installed(), A.id()).isActive(A.id())).isFalse();
  }

  static void failsWith(CompletableFuture<?> f, Class<? extends Throwable> type, String message) {
    assertThat(f).isCompletedExceptionally();
    assertThatThrownBy(f::join).hasCauseInstanceOf(type).hasMessageContaining(message);
  }

  @Test
  void anIncarnationIsAnsweredAgainOnlyForTheIdentityThatRegisteredItOrItsCredential() {
    loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> first = loop.callAsLoop(() -> membership.register(A, "atoll:pod:one", false));
    vt.advance(Duration.ofMillis(10));
    assertThat(first.join().isActive(A.id())).isTrue();
    assertThat(loop.callAsLoop(() -> membership.register(A, "atoll:pod:one", false))).isCompletedWithValue(installed());
    failsWith(loop.callAsLoop(() -> membership.register(A, "atoll:pod:two", false)), SecurityException.class,
        "register for pod " + A.id() + " refused: atoll:pod:two did not register that incarnation");
    assertThat(loop.callAsLoop(() -> membership.register(A, "", false))).as("without TLS").isCompletedWithValue(installed());
    assertThat(loop.callAsLoop(() -> membership.register(A, "atoll:pod:two", true))).as("with the incarnation's credential")
        .isCompletedWithValue(installed());
    failsWith(loop.callAsLoop(() -> membership.register(A, "atoll:pod:one", false)), SecurityException.class,
        "atoll:pod:one did not register that incarnation");
    assertThat(rebalances).hasSize(1);
  }

  @Test
  void aClusterAtItsMostPodsRefusesANewPodAndStillAnswersAKnownOne() {
    Journal small = new Journal(store, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt, 2, c -> {},
        e -> {}, Duration.ZERO, Duration.ZERO, ClusterConfig.MAX_PODS - 2, 1024);
    Membership m = new Membership(small, new Leases(TTL, Duration.ofMillis(200), Duration.ofHours(1)), p -> verdict,
        loop, vt.executor(0, () -> true), vt, rebalances::add);
    loop.callAsLoop(() -> small.recover(UnaryOperator.identity()));
    CompletableFuture<ClusterConfig> a = loop.callAsLoop(() -> m.register(A, "atoll:pod:a", false));
    vt.advance(Duration.ofMillis(10));
    CompletableFuture<ClusterConfig> b = loop.callAsLoop(() -> m.register(B, "atoll:pod:b", false));
    vt.advance(Duration.ofMillis(10));
    assertThat(b.join().activePods()).hasSize(2);
    failsWith(loop.callAsLoop(() -> m.register(C)), IllegalStateException.class,
        "pod " + C.id() + ": the cluster has 2 pods (expected: at most 2)");
    assertThat(loop.callAsLoop(() -> m.register(A, "atoll:pod:a", false))).isCompleted();
    assertThat(a.join().isActive(A.id())).isTrue();
  }

  @Test
  void loopOnlyMethodsRefuseOtherThreadsBeforeTheyChangeAnything() {
    assertThatThrownBy(membership::draining).as("even with nobody draining").isInstanceOf(IllegalStateException.class);
    joinA();
    loop.callAsLoop(() -> membership.drain(A.id()));
    assertThatThrownBy(() -> membership.markGone(A.id(), "left")).isInstanceOf(IllegalStateException.class);
    assertThat(loop.callAsLoop(membership::draining)).as("still draining: the refused call changed nothing")
        .containsExactly(A.id());
    assertThat(installed().isActive(A.id())).isTrue();
  }

  @Test
  void onlyAnActiveMemberDrainsAndAPodThatIsNoLongerOneStopsDraining() {
    joinA();
    failsWith(loop.callAsLoop(() -> membership.drain(B.id())), IllegalStateException.class,
        "pod " + B.id() + " is not an active member; only a member can drain");
    assertThat(loop.callAsLoop(membership::draining)).isEmpty();
    assertThat(loop.callAsLoop(() -> membership.drain(A.id()))).isCompletedWithValue(installed());
    assertThat(loop.callAsLoop(() -> membership.drain(A.id()))).isCompletedWithValue(installed());
    assertThat(loop.callAsLoop(membership::draining)).containsExactly(A.id());
    assertThat(rebalances).containsExactly("pod " + A.id() + " joined", "pod " + A.id() + " drains",
        "pod " + A.id() + " drains");
    // removed by another path than markGone: draining() forgets it
    loop.callAsLoop(() -> journal.transition(c -> Rounds.leave(c, A.id())));
    vt.advance(Duration.ofMillis(10));
    assertThat(loop.callAsLoop(membership::draining)).isEmpty();
  }

  @Test
  void aPodMarkedGoneStopsDrainingBeforeItsRemovalIsSaved() {
    joinA();
    loop.callAsLoop(() -> membership.drain(A.id()));
    CompletableFuture<ClusterConfig> gone = loop.callAsLoop(() -> membership.markGone(A.id(), "left"));
    assertThat(gone).isNotDone();
    assertThat(installed().isActive(A.id())).isTrue();
    assertThat(loop.callAsLoop(membership::draining)).isEmpty();
  }

  @Test
  void withoutItsStoreLeaseTheManagerGrantsNothingAndChargesNoPodForTheTime() {
    joinA();
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofSeconds(11)); // the store lease (10 s) ran out: nobody renewed it
    assertThatThrownBy(() -> loop.runAsLoop(() -> membership.renew(A.id()))).isInstanceOf(NotLeadingException.class)
        .hasMessageContaining("is not sure it still leads its store");
    failsWith(loop.callAsLoop(() -> membership.register(B)), NotLeadingException.class, "is not sure it still leads");
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).as("A could not renew: not its fault").isTrue();
    loop.runAsLoop(journal::renewLease);
    vt.advance(Duration.ofMillis(10));
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).as("the 11 s without a lease are not charged to A").isTrue();
    assertThat((boolean) loop.callAsLoop(() -> membership.renew(A.id()))).isTrue();
  }

  @Test
  void aHealthProofThatArrivesAfterCloseChangesNothing() {
    Membership m = new Membership(journal, new Leases(TTL, Duration.ofMillis(200), Duration.ofHours(1)),
        p -> PodHealth.Verdict.GONE, loop, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), vt,
        rebalances::add);
    loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
    loop.callAsLoop(() -> m.register(A));
    vt.advance(Duration.ofMillis(10));
    m.reportUnhealthy(A.id(), B.id());
    vt.advance(Duration.ofMillis(1)); // the report reached the loop; the health check runs 5 ms later
    loop.runAsLoop(m::close);
    vt.advance(Duration.ofMillis(20));
    assertThat(installed().isActive(A.id())).isTrue();
  }

  @Test
  void aNewPodsLeaseCountsFromItsSavedRegistrationAndAKnownPodsFromItsLatest() {
    loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
    loop.runAsLoop(membership::findDeadPods);
    loop.callAsLoop(() -> membership.register(A)); // saved 5 ms later
    vt.advance(Duration.ofMillis(1203));
    loop.runAsLoop(membership::findDeadPods); // 1203 ms after the registration, 1198 after its save
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
    loop.callAsLoop(() -> membership.register(A)); // a known pod registers again: its lease starts anew
    vt.advance(Duration.ofMillis(1100));
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isTrue();
    vt.advance(Duration.ofMillis(200));
    loop.runAsLoop(membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(installed().isActive(A.id())).isFalse();
  }

  @Test
  void aRenewalAfterAPauseOfTheManagerWaitsForTheStoreLeaseFirst() {
    Membership m = new Membership(journal, new Leases(TTL, Duration.ofMillis(200), Duration.ofMillis(300)),
        p -> verdict, loop, vt.executor(0, () -> true), vt, rebalances::add);
    loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
    loop.callAsLoop(() -> m.register(A));
    vt.advance(Duration.ofMillis(10));
    loop.runAsLoop(m::findDeadPods);
    assertThat((boolean) loop.callAsLoop(() -> m.renew(A.id()))).isTrue();
    vt.advance(Duration.ofMillis(2000)); // no look for dead pods in 2 s: the manager was paused
    assertThatThrownBy(() -> loop.runAsLoop(() -> m.renew(A.id()))).as("the pause is noticed before any grant")
        .isInstanceOf(NotLeadingException.class);
    loop.runAsLoop(journal::renewLease);
    vt.advance(Duration.ofMillis(10));
    assertThat((boolean) loop.callAsLoop(() -> m.renew(A.id()))).isTrue();
    assertThat(installed().isActive(A.id())).as("the pause is not charged to the pod").isTrue();
  }
}
