package io.atoll.testkit.runtime;

import io.atoll.core.FencingToken;
import io.atoll.core.spi.ForwardingStateStore;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.core.spi.StoredState;
import io.atoll.runtime.Durable;
import io.atoll.runtime.DurableContext;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.store.redis.RedisStateStore;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A pod process hosting durable counters kept in Redis, for {@link DurableCountersProcessTest}:
 * {@code DurableCounterPod MANAGER_HOST:PORT REDIS_URI}. It prints its address ("listening on
 * ...") and a line "claim counter/ID" for every read of the store, so the test can tell which
 * activations started from a state carried in a hand-off. SIGTERM stops it gracefully.
 */
public final class DurableCounterPod {

  /** What a counter understands. */
  public sealed interface Msg permits Inc, Get {}

  /** Adds one, saves, and answers the new count. */
  public record Inc(Reply<Long> reply) implements Msg {}

  /** Answers the count. */
  public record Get(Reply<Long> reply) implements Msg {}

  /** A counter's state. */
  public record Count(long n) {}

  /** Kept until their shard moves: every counter that was used is live on its owner. */
  public static final EntityType<Msg> TYPE = EntityType.of("durable-counter", Msg.class).withIdleTime(Duration.ZERO);

  private DurableCounterPod() {}

  /** Runs a pod until stopped. */
  public static void main(String[] args) throws Exception {
    StateStore redis = RedisStateStore.open(args[1]);
    StateStore logged = new ForwardingStateStore(redis) {
      @Override
      public StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
        System.out.println("claim " + type + "/" + id);
        return super.claim(type, id, token);
      }
    };
    Sharding pod = Sharding.builder().manager(args[0]).terminationTimeout(Duration.ofSeconds(2))
        .register(TYPE, Durable.entity(logged, Count.class, new Count(0), DurableCounterPod::handle))
        .start();
    System.out.println("durable counter pod " + pod.podId() + " listening on " + pod.podId().address());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      pod.close();
      logged.close();
      System.out.println("stopped");
      stopped.countDown();
    }));
    stopped.await();
  }

  static void handle(Msg msg, DurableContext<Count> ctx) throws StateStoreException {
    switch (msg) {
      case Inc i -> {
        ctx.setState(new Count(ctx.state().n() + 1));
        ctx.persist();
        i.reply().send(ctx.state().n());
      }
      case Get g -> g.reply().send(ctx.state().n());
    }
  }
}
