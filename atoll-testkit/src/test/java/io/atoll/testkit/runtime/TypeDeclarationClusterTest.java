package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ShardHasher;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.runtime.ShardingObserver;
import io.atoll.testkit.net.TcpRelay;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A type's hasher changed in a rolling update, over real pods and a real manager on loopback: a
 * pod that hosts the type with another hasher (or on another role) is refused at its start while
 * a pod of the old one lives, so no id can be in a shard of each and its entity live on both; it
 * starts once every old pod is gone. The refusal holds across a manager restart, which saved no
 * declaration: the pods declare again when their renewals ask them to.
 */
class TypeDeclarationClusterTest {

  /** Another placement of the same ids: for some id the two hashers pick different shards. */
  static final ShardHasher SHIFTED = (id, count) -> Math.floorMod(id.hashCode() + 1, count) + 1;

  static final EntityType<Counter.Msg> OLD = EntityType.of("job", Counter.Msg.class)
      .withTerminationMessage(new Counter.Stop());
  static final EntityType<Counter.Msg> NEW = OLD.withHasher(SHIFTED);

  @Test
  void aPodWithAnotherHasherForATypeIsRefusedWhileTheOldPodsLiveAndAdmittedOnceTheyAreGone() throws Exception {
    try (LocalCluster c = LocalCluster.builder().settings(LocalCluster.fastSettings(20)).start()) {
      Sharding old1 = c.addPod(b -> b.register(OLD, ctx -> new Counter()));
      Sharding old2 = c.addPod(b -> b.register(OLD, ctx -> new Counter()));
      c.awaitSettled(Duration.ofSeconds(20));
      assertRefused(c, old1, old2);
      // The same hasher is welcome.
      Sharding same = c.addPod(b -> b.register(OLD, ctx -> new Counter()));
      // A restart forgets every declaration; the live pods declare theirs again when asked, and the
      // refusal holds.
      int port = c.managerAddress().port();
      c.stopManager();
      c.startManager(port);
      assertRefused(c, old1, old2);
      c.stopPod(old1);
      assertRefused(c, old2);
      c.stopPod(old2);
      c.stopPod(same);
      Sharding fresh = c.addPod(b -> b.register(NEW, ctx -> new Counter()));
      c.awaitSettled(Duration.ofSeconds(20));
      String answer = fresh.entity(NEW, "user-1").<String>ask(Counter.Token::new).toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
      assertThat(answer).startsWith(fresh.podId() + " ");
      // Now the old hasher is the odd one out.
      assertThatThrownBy(() -> c.podBuilder().startTimeout(Duration.ofSeconds(20))
          .register(OLD, ctx -> new Counter()).start())
          .hasMessageContaining("entity type declaration refused")
          .hasMessageContaining("hasher ShardHasher.DEFAULT")
          .hasMessageContaining("(pods " + fresh.podId() + ")");
    }
  }

  @Test
  void aPodThatHostsATypeOnAnotherRoleIsRefused() {
    try (LocalCluster c = LocalCluster.builder().settings(LocalCluster.fastSettings(20)).start()) {
      Sharding old = c.addPod(b -> b.register(OLD, ctx -> new Counter()));
      assertThatThrownBy(() -> c.podBuilder().startTimeout(Duration.ofSeconds(20))
          .register(OLD.onRole("worker"), ctx -> new Counter()).start())
          .hasMessageContaining("declares entity type 'job' with role 'worker', hasher ShardHasher.DEFAULT")
          .hasMessageContaining("but live pods hosting it declare the default role, hasher ShardHasher.DEFAULT")
          .hasMessageContaining("(pods " + old.podId() + ")");
    }
  }

  @Test
  void aPodDeclaredGoneWhilePodsWithAnotherHasherTookItsTypeIsRefusedOnceAndStaysOut() {
    try (LocalCluster c = LocalCluster.builder().settings(LocalCluster.fastSettings(20)).start();
        TcpRelay relay = TcpRelay.to(c.managerAddress().port())) {
      AtomicInteger fences = new AtomicInteger();
      // The old pod reaches the manager only through the relay.
      Sharding old = c.addPod(b -> b.manager(relay.address()).register(OLD, ctx -> new Counter())
          .observer(new ShardingObserver() {
            @Override
            public void fenced() {
              fences.incrementAndGet();
            }
          }));
      c.awaitSettled(Duration.ofSeconds(20));
      PodId oldId = old.podId();
      relay.mode(TcpRelay.Mode.REFUSE); // a partition: its lease lapses and the manager declares it gone
      Awaitility.await().atMost(Duration.ofSeconds(15)).until(() ->
          c.manager().config().pod(oldId).map(e -> e.status() == PodStatus.GONE).orElse(false));
      Sharding fresh = c.addPod(b -> b.register(NEW, ctx -> new Counter()));
      c.awaitSettled(Duration.ofSeconds(20));
      int before = fences.get();
      relay.mode(TcpRelay.Mode.PASS); // healed: its renewal is answered "unknown pod", and it rejoins
      Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> fences.get() > before);
      // Refused for its hasher, it stays out: it neither fences nor registers again, renewal after
      // renewal (a lease is 1.5 s; before the fix each renewal, every 0.5 s, began another rejoin).
      int after = fences.get();
      Awaitility.await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6))
          .until(() -> fences.get() == after);
      assertThat(after).as("one rejoin after the partition healed").isEqualTo(before + 1);
      assertThat(c.manager().config().activePods()).as("only the new hasher's pod is a member")
          .extracting(Pod::id).containsExactly(fresh.podId());
    }
  }

  /** A pod hosting {@link #NEW} fails to start, naming the type, itself and what {@code live} declared. */
  private static void assertRefused(LocalCluster c, Sharding... live) {
    // The start timeout is long: the refusal ends the start at once, retrying cannot help.
    var refused = assertThatThrownBy(() -> c.podBuilder().startTimeout(Duration.ofSeconds(20))
        .register(NEW, ctx -> new Counter()).start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("refused by the shard manager at " + c.managerAddress())
        .hasMessageContaining("entity type declaration refused: pod ")
        .hasMessageContaining("declares entity type 'job' with the default role, hasher io.atoll.testkit.runtime"
            + ".TypeDeclarationClusterTest$$Lambda")
        .hasMessageContaining("but live pods hosting it declare the default role, hasher ShardHasher.DEFAULT");
    for (Sharding p : live) {
      refused.hasMessageContaining(p.podId().toString());
    }
  }
}
