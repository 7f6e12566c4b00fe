package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.FencingToken;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.VirtualTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Fencing never lets two activations of one entity run handlers at the same time in one pod: a
 * fenced handler that is still running holds back the entity's next activation, and that next
 * activation carries a newer token.
 */
class FencingOverlapTest {

  sealed interface Msg permits Hold, Touch {}

  /** Blocks the handler until the test opens {@link #gate}. */
  record Hold() implements Msg {}

  record Touch(Reply<String> reply) implements Msg {}

  static final EntityType<Msg> TYPE = EntityType.of("fenced", Msg.class);

  final CountDownLatch gate = new CountDownLatch(1);
  final AtomicInteger running = new AtomicInteger();
  final AtomicInteger mostAtOnce = new AtomicInteger();
  final List<FencingToken> activations = new CopyOnWriteArrayList<>();

  /** The type as the pod hosts it: each entity a thread of its own, as by default. */
  EntityType<Msg> hosted() {
    return TYPE;
  }

  Sharding.Builder hosting(Sharding.Builder b) {
    return b.register(hosted(), ctx -> {
      activations.add(ctx.token());
      return (msg, c) -> {
        mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
        try {
          switch (msg) {
            case Hold h -> gate.await(30, TimeUnit.SECONDS);
            case Touch t -> t.reply().send(String.valueOf(c.token()));
          }
        } finally {
          running.decrementAndGet();
        }
      };
    });
  }

  @Test
  void aRetriedMessageAfterALeaseLapseWaitsForTheFencedHandlerAndRunsUnderANewerToken() throws Exception {
    // Only the pod's clock jumps: its lease runs out by its own clock while the manager, on the
    // system clock, keeps granting renewals; the next renewal lands and the pod serves again at
    // the same claim epoch, as after a manager that stalled between the lease and the margin.
    VirtualTicker podClock = new VirtualTicker();
    AtomicBoolean fenced = new AtomicBoolean();
    ShardingObserver observer = new ShardingObserver() {
      @Override
      public void fenced() {
        fenced.set(true);
      }
    };
    try (LocalCluster cluster = LocalCluster.builder().shards(4).podTemplate(this::hosting).start()) {
      // The pod's clock jumps while a handler runs, so that handler seems to take seconds: the
      // admission's bound in time (maxQueueTime) would refuse what queues behind it, and this test
      // is about the fenced handler, not about overload. Deadlines still count.
      Sharding pod = cluster.addPod(b -> b.ticker(podClock).observer(observer).maxQueueTime(Duration.ZERO));
      cluster.awaitSettled(Duration.ofSeconds(10));
      Sharding client = cluster.addClient();
      EntityRef<Msg> ref = client.entity(TYPE, "x");
      try {
        ref.tell(new Hold());
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> running.get() == 1);

        // A jump well past the lease: the held handler then seems to take longer than the
        // sender's deadline leaves, as a slow machine's waits below once made it by chance.
        podClock.advance(cluster.settings().leaseTtl().plusMillis(4000));
        Awaitility.await().atMost(Duration.ofSeconds(5)).untilTrue(fenced);
        Awaitility.await().atMost(Duration.ofSeconds(5))
            .until(() -> pod.holdsLease() && pod.servedShards().size() == 4);

        CompletableFuture<String> touch = ref.<String>ask(Touch::new).toCompletableFuture();
        Awaitility.await("the retried message waits while the fenced handler runs")
            .during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(3))
            .until(() -> activations.size() == 1 && !touch.isDone());
      } finally {
        gate.countDown();
      }
      // The held handler seemed, by the jumped clock, to take the jump and every second the test
      // waited: longer than an ask's deadline leaves, so admission refuses the next Touch as
      // overloaded until that average fades (it halves each second). A sender retries such a
      // refusal; so does this one, for a bounded time.
      AtomicReference<String> answered = new AtomicReference<>();
      Awaitility.await("an answer once the held handler returned").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> {
            try {
              answered.set(ref.<String>ask(Touch::new).toCompletableFuture().get(10, TimeUnit.SECONDS));
              return true;
            } catch (ExecutionException e) {
              if (e.getCause() instanceof DeliveryException d && d.reason() == DeliveryException.Reason.OVERLOADED) {
                return false;
              }
              throw e;
            }
          });
      String answer = answered.get();
      assertThat(mostAtOnce).as("handlers of one entity running at once").hasValue(1);
      assertThat(activations).hasSize(2);
      assertThat(activations.get(1)).as("the token of the activation after the lapse (answered %s)", answer)
          .isGreaterThan(activations.get(0));
    }
  }
}
