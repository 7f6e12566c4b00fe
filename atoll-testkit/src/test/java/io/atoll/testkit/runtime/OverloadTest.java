package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.OverloadCause;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Admission under overload, across the wire: a pod whose entities of a slow type get several
 * times what they can handle refuses the excess at once as overloaded, with a retry hint, and
 * handles what it accepts within its senders' deadlines; no sender times out.
 */
@AtollCluster(shards = 4)
class OverloadTest {

  /** An entity whose every message takes {@link #HANDLER_MS} of blocking work; answers how many it handled. */
  static final class Slow implements Entity<Slow.Work> {
    record Work(Reply<Long> reply) {}

    static final EntityType<Work> TYPE = EntityType.of("slow", Work.class);
    static final long HANDLER_MS = 20;
    private long handled;

    @Override
    public void onMessage(Work msg, EntityContext context) throws Exception {
      TimeUnit.MILLISECONDS.sleep(HANDLER_MS); // the work itself: a handler slower than its senders' pace
      msg.reply().send(++handled);
    }
  }

  /** Counts the pod's refusals by cause. */
  static final class Refusals implements ShardingObserver {
    final Map<OverloadCause, AtomicLong> byCause = new ConcurrentHashMap<>();

    @Override
    public void messageRefused(String type, OverloadCause cause) {
      byCause.computeIfAbsent(cause, c -> new AtomicLong()).incrementAndGet();
    }

    long get(OverloadCause c) {
      AtomicLong n = byCause.get(c);
      return n == null ? 0 : n.get();
    }
  }

  /** One ask: when it was sent, when it ended, and how. */
  record Outcome(long sentNanos, long doneNanos, Throwable failure) {
    long millis() {
      return TimeUnit.NANOSECONDS.toMillis(doneNanos - sentNanos);
    }

    DeliveryException refusal() {
      Throwable c = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
          ? failure.getCause() : failure;
      return c instanceof DeliveryException d ? d : null;
    }
  }

  private static List<Outcome> sendAt(Sharding client, int perSecond, int count, int entities) throws Exception {
    List<CompletableFuture<Outcome>> all = new ArrayList<>();
    long start = System.nanoTime();
    long spacing = TimeUnit.SECONDS.toNanos(1) / perSecond;
    for (int i = 0; i < count; i++) {
      long due = start + i * spacing;
      long early = due - System.nanoTime();
      if (early > 0) {
        LockSupport.parkNanos(early); // an open-loop sender's pace, not a wait for anything
      }
      long sent = System.nanoTime();
      all.add(client.entity(Slow.TYPE, "e" + (i % entities)).<Long>ask(Slow.Work::new).toCompletableFuture()
          .handle((v, e) -> new Outcome(sent, System.nanoTime(), e)));
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    List<Outcome> out = new ArrayList<>();
    for (CompletableFuture<Outcome> f : all) {
      out.add(f.join());
    }
    return out;
  }

  @Test
  void aPodOverloadedFiveTimesRefusesTheExcessAtOnceAndHandlesWhatItTakesInTime(LocalCluster cluster)
      throws Exception {
    Refusals refusals = new Refusals();
    cluster.addPod(b -> b.register(Slow.TYPE, ctx -> new Slow()).maxQueueTime(Duration.ofMillis(200))
        .observer(refusals));
    Duration timeout = Duration.ofSeconds(3);
    Sharding client = cluster.addClient(b -> b.askTimeout(timeout));
    cluster.awaitSettled(Duration.ofSeconds(20));
    // 4 entities of 20 ms each handle 200 a second; they get 1,000 a second for 2 s.
    List<Outcome> outcomes = sendAt(client, 1000, 2000, 4);

    List<Outcome> accepted = outcomes.stream().filter(o -> o.failure() == null).toList();
    List<Outcome> refused = outcomes.stream().filter(o -> o.failure() != null).toList();
    assertThat(refused).as("every failure is a refusal as overloaded: none timed out").allSatisfy(o -> {
      assertThat(o.refusal()).isNotNull();
      assertThat(o.refusal().reason()).isEqualTo(DeliveryException.Reason.OVERLOADED);
    });
    assertThat(accepted.size()).as("what the entities can handle in 2 s is handled").isGreaterThan(200);
    assertThat(refused.size()).as("most of a five-fold overload is refused").isGreaterThan(outcomes.size() / 2);
    assertThat(accepted).as("accepted asks are answered within their deadline")
        .allSatisfy(o -> assertThat(o.millis()).isLessThan(timeout.toMillis()));
    long slowRefusals = refused.stream().filter(o -> o.millis() > 1_000).count();
    assertThat(slowRefusals).as("refusals come at once, not at the deadline (of %s)", refused.size())
        .isLessThanOrEqualTo(refused.size() / 100);
    assertThat(refused).as("a refusal says why and when to retry").anySatisfy(o -> {
      assertThat(o.refusal()).hasMessageContaining("slow/").hasMessageContaining("maxQueueTime");
      assertThat(o.refusal().retryAfter()).isGreaterThan(Duration.ofMillis(100));
    });
    assertThat(refusals.get(OverloadCause.QUEUE_TIME)).as("the pod counted its refusals by cause")
        .isGreaterThanOrEqualTo(refused.size() / 2);
  }

  @Test
  void withoutATimeBoundAMessageThatWouldMissItsDeadlineIsRefusedOnArrival(LocalCluster cluster) throws Exception {
    Refusals refusals = new Refusals();
    cluster.addPod(b -> b.register(Slow.TYPE, ctx -> new Slow()).maxQueueTime(Duration.ZERO).observer(refusals));
    Duration timeout = Duration.ofMillis(600);
    Sharding client = cluster.addClient(b -> b.askTimeout(timeout));
    cluster.awaitSettled(Duration.ofSeconds(20));
    // The type's handler time is measured once, then 100 asks to one entity at once: 20 ms each,
    // so about the first 25 fit in 600 ms; the rest would not.
    assertThat(client.entity(Slow.TYPE, "one").<Long>ask(Slow.Work::new).toCompletableFuture()
        .get(10, TimeUnit.SECONDS)).isEqualTo(1L);
    List<Outcome> outcomes = sendAt(client, 1_000_000, 100, 1);
    List<Outcome> accepted = outcomes.stream().filter(o -> o.failure() == null).toList();
    assertThat(outcomes).as("none timed out").noneMatch(o -> o.refusal() != null
        && o.refusal().reason() == DeliveryException.Reason.TIMEOUT);
    assertThat(accepted.size()).as("what fits in the deadline is handled").isBetween(10, 35);
    assertThat(refusals.get(OverloadCause.DEADLINE)).as("the rest refused on arrival").isGreaterThan(50);
  }
}
