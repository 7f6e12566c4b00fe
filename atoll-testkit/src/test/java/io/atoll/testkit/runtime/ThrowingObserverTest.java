package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.FencingToken;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An observer that breaks its contract and throws (a metrics library with a bug) costs its own
 * reports only: entities are activated and answer, nothing is wedged or dropped, hand-offs finish.
 */
@AtollCluster(shards = 4, podTemplate = Counter.Pods.class)
class ThrowingObserverTest {

  /** Throws from every callback, after counting it. */
  static final class Throwing implements ShardingObserver {
    final AtomicInteger calls = new AtomicInteger();

    private void boom() {
      calls.incrementAndGet();
      throw new IllegalStateException("observer bug");
    }

    @Override
    public void shardActivated(int shard, long epoch) {
      boom();
    }

    @Override
    public void shardReleased(int shard) {
      boom();
    }

    @Override
    public void entityActivated(String type, String entityId, FencingToken token) {
      boom();
    }

    @Override
    public void entityDeactivated(String type, String entityId, FencingToken token) {
      boom();
    }

    @Override
    public void messageSent() {
      boom();
    }

    @Override
    public void messageHandled(boolean ask, long nanos) {
      boom();
    }

    @Override
    public void messageFailed(DeliveryException.Reason reason) {
      boom();
    }
  }

  @Test
  void anObserverThatThrowsNeitherWedgesEntitiesNorDropsMessages(LocalCluster cluster) throws Exception {
    Throwing observer = new Throwing();
    Sharding pod = cluster.addPod(b -> b.observer(observer));
    cluster.awaitSettled(Duration.ofSeconds(10));
    for (int round = 1; round <= 3; round++) {
      for (int e = 0; e < 8; e++) {
        pod.entity(Counter.TYPE, "o" + e).tell(new Counter.Add(1)).toCompletableFuture().get(10, TimeUnit.SECONDS);
        long v = pod.entity(Counter.TYPE, "o" + e).<Long>ask(Counter.Get::new).toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
        assertThat(v).isEqualTo(round);
      }
    }
    assertThat(observer.calls).as("the observer was called, and threw").hasValueGreaterThan(8);
    // A second pod takes half the shards: the hand-off (and its reports) still finishes.
    cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(30));
    for (int e = 0; e < 8; e++) {
      long v = pod.entity(Counter.TYPE, "o" + e).<Long>ask(Counter.Get::new).toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
      assertThat(v).as("o%d after the hand-off (the counter is kept only in memory, so a moved one is 0)", e)
          .isIn(0L, 3L);
    }
  }
}
