package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Back-pressure: a pod whose mailboxes hold {@code maxQueued} messages refuses the next one at
 * once as overloaded, across the wire, instead of letting it wait until its sender times out; what
 * it queued is still handled.
 */
@AtollCluster(shards = 4, podTemplate = Counter.Pods.class)
class BackPressureTest {

  final CountDownLatch gate = new CountDownLatch(1);
  final CountDownLatch entered = new CountDownLatch(1);

  @AfterEach
  void open() {
    gate.countDown();
    Counter.LATCHES.remove("overload");
    Counter.ENTERED.remove("overload");
  }

  @Test
  void aFullPodRefusesTheNextMessageAtOnceAsOverloadedAndHandlesWhatItQueued(LocalCluster cluster) throws Exception {
    Counter.LATCHES.put("overload", gate);
    cluster.addPod(b -> b.maxQueued(10));
    Sharding client = cluster.addClient(b -> b.sendTimeout(Duration.ofSeconds(20)));
    cluster.awaitSettled(Duration.ofSeconds(20));
    Counter.ENTERED.put("overload", entered);
    // The entity is active (its shard too, so nothing waits outside the mailboxes), then one
    // handler blocks and ten messages wait behind it: the pod's limit.
    assertThat(client.entity(Counter.TYPE, "busy").<Long>ask(Counter.Get::new).toCompletableFuture()
        .get(10, TimeUnit.SECONDS)).isZero();
    CompletableFuture<Void> blocked = client.entity(Counter.TYPE, "busy").tell(new Counter.Block("overload"))
        .toCompletableFuture();
    assertThat(entered.await(10, TimeUnit.SECONDS)).as("the blocking handler started").isTrue();
    List<CompletableFuture<Void>> queued = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      queued.add(client.entity(Counter.TYPE, "busy").tell(new Counter.Add(1)).toCompletableFuture());
    }
    long t0 = System.nanoTime();
    CompletableFuture<Void> refused = client.entity(Counter.TYPE, "busy").tell(new Counter.Add(1))
        .toCompletableFuture();
    assertThatThrownBy(() -> refused.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
        .isInstanceOfSatisfying(DeliveryException.class, e -> {
          assertThat(e.reason()).isEqualTo(DeliveryException.Reason.OVERLOADED);
          assertThat(e).hasMessageContaining("counter/busy").hasMessageContaining("overloaded")
              .hasMessageContaining("10 messages");
        });
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("refused long before the 20 s send timeout")
        .isLessThan(Duration.ofSeconds(5));
    assertThat(queued).noneMatch(CompletableFuture::isDone);
    gate.countDown();
    blocked.get(10, TimeUnit.SECONDS);
    CompletableFuture.allOf(queued.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
    assertThat(client.entity(Counter.TYPE, "busy").<Long>ask(Counter.Get::new).toCompletableFuture()
        .get(10, TimeUnit.SECONDS)).isEqualTo(10L);
    // The count went back down: as many again are taken.
    List<CompletableFuture<Void>> again = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      again.add(client.entity(Counter.TYPE, "busy").tell(new Counter.Add(1)).toCompletableFuture());
    }
    CompletableFuture.allOf(again.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
  }
}
