package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.FencingToken;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Activations: passivation when idle, termination messages, restarts after failures, tokens. */
@AtollCluster(shards = 10, podTemplate = Counter.Pods.class)
class LifecycleTest {

  LocalCluster cluster;
  final List<String> events = new CopyOnWriteArrayList<>();

  final ShardingObserver recorder = new ShardingObserver() {
    @Override
    public void entityActivated(String type, String entityId, FencingToken token) {
      events.add("start " + entityId + " " + token.epoch());
    }

    @Override
    public void entityDeactivated(String type, String entityId, FencingToken token) {
      events.add("end " + entityId + " " + token.epoch());
    }
  };

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
  }

  @Test
  void anIdleEntityIsPassivatedAfterItsTerminationMessageAndStartsAgainOnItsNextMessage() throws Exception {
    List<String> stops = new CopyOnWriteArrayList<>();
    EntityType<Counter.Msg> idle = EntityType.of("idle-counter", Counter.Msg.class)
        .withIdleTime(Duration.ofMillis(500)).withTerminationMessage(new Counter.Stop());
    Sharding pod = cluster.addPod(b -> b.observer(recorder).register(idle, ctx -> (msg, c) -> {
      if (msg instanceof Counter.Stop) {
        stops.add(c.entityId());
      } else if (msg instanceof Counter.Get g) {
        g.reply().send(42L);
      }
    }));
    cluster.awaitSettled(Duration.ofSeconds(10));
    pod.entity(idle, "sleepy").<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertThat(pod.activeEntities()).isEqualTo(1);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> pod.activeEntities() == 0);
    assertThat(stops).containsExactly("sleepy");
    assertThat(pod.entity(idle, "sleepy").<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS))
        .isEqualTo(42L);
    assertThat(events.stream().filter(e -> e.startsWith("start sleepy")).count()).isEqualTo(2);
  }

  @Test
  void aFailingHandlerFailsItsMessageAndRestartsTheEntity() throws Exception {
    Sharding pod = cluster.addPod(b -> b.observer(recorder));
    cluster.awaitSettled(Duration.ofSeconds(10));
    EntityRef<Counter.Msg> ref = pod.entity(Counter.TYPE, "flaky");
    ref.tell(new Counter.Add(5)).toCompletableFuture().get(5, TimeUnit.SECONDS);
    var failed = ref.tell(new Counter.Fail("boom")).toCompletableFuture();
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(failed::isDone);
    assertThat(failed).isCompletedExceptionally();
    try {
      failed.join();
    } catch (java.util.concurrent.CompletionException e) {
      assertThat(e.getCause()).isInstanceOfSatisfying(DeliveryException.class, d -> {
        assertThat(d.reason()).isEqualTo(DeliveryException.Reason.ENTITY_FAILED);
        assertThat(d).hasMessageContaining("counter/flaky").hasMessageContaining("boom");
      });
    }
    // A new activation: the in-memory value starts over.
    assertThat(ref.<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS)).isZero();
    assertThat(events).containsSubsequence("start flaky 2", "end flaky 2", "start flaky 2");
  }

  @Test
  void anEntityMovingToAnotherPodEndsWithItsTerminationMessageBeforeItStartsThereWithANewerToken() throws Exception {
    List<String> order = new CopyOnWriteArrayList<>();
    EntityType<Counter.Msg> traced = EntityType.of("traced", Counter.Msg.class)
        .withTerminationMessage(new Counter.Stop());
    EntityFactory<Counter.Msg> factory = ctx -> {
      order.add("start " + ctx.pod() + " " + ctx.token().epoch());
      return (msg, c) -> {
        if (msg instanceof Counter.Stop) {
          order.add("stop " + c.pod() + " " + c.token().epoch());
        } else if (msg instanceof Counter.Token t) {
          t.reply().send(c.pod() + " " + c.token());
        }
      };
    };
    Sharding a = cluster.addPod(b -> b.register(traced, factory));
    cluster.awaitSettled(Duration.ofSeconds(10));
    a.entity(traced, "mover").<String>ask(Counter.Token::new).toCompletableFuture().get(5, TimeUnit.SECONDS);
    Sharding b = cluster.addPod(x -> x.register(traced, factory));
    cluster.awaitSettled(Duration.ofSeconds(10));
    cluster.stopPod(a); // every shard moves to b
    cluster.awaitSettled(Duration.ofSeconds(10));
    String where = b.entity(traced, "mover").<String>ask(Counter.Token::new).toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
    assertThat(where).startsWith(b.podId().toString());
    assertThat(order).hasSize(3);
    assertThat(order.get(0)).startsWith("start " + a.podId());
    assertThat(order.get(1)).startsWith("stop " + a.podId());
    assertThat(order.get(2)).startsWith("start " + b.podId());
    long first = Long.parseLong(order.get(0).substring(order.get(0).lastIndexOf(' ') + 1));
    long second = Long.parseLong(order.get(2).substring(order.get(2).lastIndexOf(' ') + 1));
    assertThat(second).isGreaterThan(first);
  }
}
