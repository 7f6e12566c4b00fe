package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.ShardHasher;
import io.atoll.core.TypeDeclaration;
import io.atoll.core.spi.PodHealth;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The manager's rule on declared entity types, through {@link Membership} on a virtual clock: a
 * pod that declares a type with another hasher or role than the live pods is refused, and the
 * rule holds across a manager restart, which saved no declaration.
 */
class TypeRuleTest {

  static final Duration TTL = Duration.ofMillis(1000);
  static final ShardHasher OTHER = (id, n) -> Math.floorMod(id.hashCode() * 31 + 7, n) + 1;

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();

  static Pod pod(int i, String... roles) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 7000 + i), i), PodVersion.of("1"),
        roles.length == 0 ? Pod.DEFAULT_ROLES : List.of(roles));
  }

  static SortedMap<String, TypeDeclaration> job(String role, ShardHasher h) {
    return new TreeMap<>(Map.of("job", TypeDeclaration.of(role, h)));
  }

  /** A manager's journal and membership on the shared store: each call is a start. */
  final class Manager {
    final Journal journal = new Journal(store, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt, 2,
        c -> {}, e -> {});
    final Membership membership = new Membership(journal, new Leases(TTL, Duration.ofMillis(200),
        Duration.ofHours(1)), p -> PodHealth.Verdict.UNKNOWN, loop, vt.executor(0, () -> true), vt, r -> {});

    Manager() {
      loop.callAsLoop(() -> journal.recover(UnaryOperator.identity()));
      loop.runAsLoop(membership::inheritDeclarations);
      loop.runAsLoop(() -> membership.grantAll(TTL.plusMillis(200).toNanos()));
    }

    CompletableFuture<ClusterConfig> register(Pod p, SortedMap<String, TypeDeclaration> types) {
      CompletableFuture<ClusterConfig> f = loop.callAsLoop(() -> membership.register(p, types, "", false));
      vt.advance(Duration.ofMillis(10));
      return f;
    }

    void leave(Pod p) {
      loop.callAsLoop(() -> membership.markGone(p.id(), "left"));
      vt.advance(Duration.ofMillis(10));
    }
  }

  @Test
  void aPodThatDeclaresATypeWithAnotherHasherIsRefusedWhileAPodOfTheOldOneLivesAndAdmittedOnceAllAreGone() {
    Manager m = new Manager();
    Pod a = pod(1);
    Pod b = pod(2);
    Pod c = pod(3);
    assertThat(m.register(a, job("", ShardHasher.DEFAULT)).join().isActive(a.id())).isTrue();
    assertThat(m.register(b, job("", ShardHasher.DEFAULT)).join().isActive(b.id())).isTrue();
    MembershipTest.failsWith(m.register(c, job("", OTHER)), PodTypes.Refused.class,
        "entity type declaration refused: pod " + c.id() + " declares entity type 'job' with the default role, hasher"
            + " io.atoll.manager.TypeRuleTest$$Lambda");
    assertThatNotMember(m, c);
    m.leave(a);
    MembershipTest.failsWith(m.register(c, job("", OTHER)), PodTypes.Refused.class, "(pods " + b.id() + ")");
    m.leave(b);
    // Every pod that hosted 'job' with the old hasher is gone, so are its entities: the new one may start.
    assertThat(m.register(c, job("", OTHER)).join().isActive(c.id())).isTrue();
    MembershipTest.failsWith(m.register(pod(4), job("", ShardHasher.DEFAULT)), PodTypes.Refused.class,
        "but live pods hosting it declare the default role, hasher io.atoll.manager.TypeRuleTest$$Lambda");
  }

  @Test
  void aHasherJoiningATypeOnlyOlderPodsHostIsAdmittedWithAWarningNamingTheType() {
    Manager m = new Manager();
    Pod old = pod(1);
    m.register(old, new TreeMap<>(Map.of("job", TypeDeclaration.roleOnly("")))).join();
    try (LogLines log = new LogLines()) {
      // A role-only declaration agrees with every hasher: admitted, and said so.
      assertThat(m.register(pod(2), job("", OTHER)).join().isActive(pod(2).id())).isTrue();
      assertThat(log.of(Membership.class, "WARN")).singleElement().asString()
          .startsWith("pod " + pod(2).id() + " declares a hasher for entity types job that only pods of an older"
              + " version host");
      // Once a pod with a hasher hosts it, the next is checked against that one: no warning.
      assertThat(m.register(pod(3), job("", OTHER)).join().isActive(pod(3).id())).isTrue();
      assertThat(log.of(Membership.class, "WARN")).hasSize(1);
    }
  }

  @Test
  void aPodThatDeclaresATypeOnAnotherRoleIsRefusedAndOneDeclaringNoTypesIsNot() {
    Manager m = new Manager();
    Pod a = pod(1, "worker");
    m.register(a, job("worker", ShardHasher.DEFAULT)).join();
    MembershipTest.failsWith(m.register(pod(2), job("", ShardHasher.DEFAULT)), PodTypes.Refused.class,
        "declares entity type 'job' with the default role, hasher ShardHasher.DEFAULT");
    assertThat(m.register(pod(3), new TreeMap<>()).join().isActive(pod(3).id())).isTrue();
    // Another type, or the same declaration: admitted.
    assertThat(m.register(pod(4, "worker"), job("worker", (id, n) -> Math.abs(id.hashCode() % n) + 1)).join()
        .isActive(pod(4).id())).isTrue();
  }

  @Test
  void twoPodsRegisteringAtOnceWithDifferentHashersCannotBothJoin() {
    Manager m = new Manager();
    Pod a = pod(1);
    Pod b = pod(2);
    CompletableFuture<ClusterConfig> fa = loop.callAsLoop(() -> m.membership.register(a, job("", ShardHasher.DEFAULT),
        "", false));
    // a's join is not saved yet: b is checked against it all the same.
    CompletableFuture<ClusterConfig> fb = loop.callAsLoop(() -> m.membership.register(b, job("", OTHER), "", false));
    vt.advance(Duration.ofMillis(10));
    assertThat(fa.join().isActive(a.id())).isTrue();
    MembershipTest.failsWith(fb, PodTypes.Refused.class, "(pods " + a.id() + ")");
  }

  @Test
  void afterARestartAPodIsHeldUntilTheLivePodsDeclaredAgainAndThenRefusedIfItDisagrees() {
    Manager first = new Manager();
    Pod a = pod(1);
    Pod kv = new Pod(new PodId(new PodAddress("127.0.0.1", 7009), 9), PodVersion.KV);
    first.register(a, job("", ShardHasher.DEFAULT)).join();
    first.register(kv, new TreeMap<>()).join();
    Manager second = new Manager(); // the declarations were not saved
    Pod c = pod(3);
    MembershipTest.failsWith(second.register(c, job("", OTHER)), PodTypes.Pending.class,
        "this shard manager started after 2 live pods registered");
    // A renewal that says nothing of types (the one-argument form) leaves a and kv undeclared.
    assertThat((boolean) loop.callAsLoop(() -> second.membership.renew(a.id()))).isTrue();
    assertThat((boolean) loop.callAsLoop(() -> second.membership.renew(kv.id()))).isTrue();
    MembershipTest.failsWith(second.register(c, job("", OTHER)), PodTypes.Pending.class, "2 live pods");
    // Renewals: a says it declares types and is asked to; the KV node says it never does.
    assertThat(loop.callAsLoop(() -> second.membership.renew(a.id(), true)))
        .isEqualTo(new ManagerCalls.Renewal(true, true));
    assertThat(loop.callAsLoop(() -> second.membership.renew(kv.id(), false)))
        .isEqualTo(new ManagerCalls.Renewal(true, false));
    MembershipTest.failsWith(second.register(c, job("", OTHER)), PodTypes.Pending.class, "1 live pods");
    // a sends its Register again: a member, answered at once, and its declaration binds again.
    assertThat(second.register(a, job("", ShardHasher.DEFAULT)).join().isActive(a.id())).isTrue();
    assertThat(loop.callAsLoop(() -> second.membership.renew(a.id(), true)))
        .isEqualTo(new ManagerCalls.Renewal(true, false));
    MembershipTest.failsWith(second.register(c, job("", OTHER)), PodTypes.Refused.class, "(pods " + a.id() + ")");
    assertThat(second.register(c, job("", ShardHasher.DEFAULT)).join().isActive(c.id())).isTrue();
  }

  @Test
  void anInheritedPodThatDiesNoLongerHoldsNewPods() {
    Manager first = new Manager();
    Pod a = pod(1);
    first.register(a, job("", ShardHasher.DEFAULT)).join();
    Manager second = new Manager();
    Pod c = pod(3);
    MembershipTest.failsWith(second.register(c, job("", OTHER)), PodTypes.Pending.class, "(" + a.id() + ")");
    vt.advance(TTL.plusMillis(300)); // a never renews
    loop.runAsLoop(second.membership::findDeadPods);
    vt.advance(Duration.ofMillis(10));
    assertThat(second.register(c, job("", OTHER)).join().isActive(c.id())).isTrue();
  }

  private void assertThatNotMember(Manager m, Pod p) {
    assertThat(loop.callAsLoop(m.journal::config).pod(p.id())).isEmpty();
  }
}
