package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pod whose counters run on its shared drains: a handler that blocks anyway holds the other
 * entities back only until the pod's watchdog starts another drain, and the blocked entity's own
 * messages still wait for it, in order.
 */
@AtollCluster(shards = 8, podTemplate = Counter.SharedDrainPods.class)
class BlockedHandlerOnSharedDrainsTest {

  private final String key = "shared-" + System.nanoTime();
  private final CountDownLatch gate = new CountDownLatch(1);
  private final CountDownLatch entered = new CountDownLatch(1);

  @AfterEach
  void open() {
    gate.countDown();
    Counter.LATCHES.remove(key);
    Counter.ENTERED.remove(key);
  }

  @Test
  void aBlockedHandlerDoesNotStopTheOtherEntitiesOfItsPod(LocalCluster cluster) throws Exception {
    Counter.LATCHES.put(key, gate);
    Counter.ENTERED.put(key, entered);
    Sharding pod = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(10));
    CompletableFuture<Void> blocked = pod.entity(Counter.TYPE, "blocked").tell(new Counter.Block(key))
        .toCompletableFuture();
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Void> behind = pod.entity(Counter.TYPE, "blocked").tell(new Counter.Add(5)).toCompletableFuture();

    // Many entities, so some are queued behind the blocked handler on every drain there is.
    List<CompletableFuture<Long>> others = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      String id = "other-" + i;
      pod.entity(Counter.TYPE, id).tell(new Counter.Add(i));
      others.add(pod.entity(Counter.TYPE, id).<Long>ask(Counter.Get::new).toCompletableFuture());
    }
    for (int i = 0; i < others.size(); i++) {
      assertThat(others.get(i).get(5, TimeUnit.SECONDS)).as("other-%s", i).isEqualTo(i);
    }
    assertThat(blocked).isNotDone();
    assertThat(behind).as("the blocked entity's next message waits for it").isNotDone();

    gate.countDown();
    blocked.get(5, TimeUnit.SECONDS);
    behind.get(5, TimeUnit.SECONDS);
    assertThat(pod.entity(Counter.TYPE, "blocked").<Long>ask(Counter.Get::new).toCompletableFuture()
        .get(5, TimeUnit.SECONDS)).isEqualTo(5);
  }
}
