package io.atoll.bench.cluster;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/** The benchmarks' entity: a counter, as in the Pekko baseline. Public for JMH; not API. */
public final class BenchCounter implements Entity<BenchCounter.Msg> {

  /** Its messages. */
  public sealed interface Msg permits Inc, Get, Handled {}

  /** Adds to the counter (sent with tell). @param by the amount */
  public record Inc(long by) implements Msg {}

  /** Answers the value (sent with ask). @param reply where the value goes */
  public record Get(Reply<Long> reply) implements Msg {}

  /**
   * Answers how many {@link Inc} this JVM's counters have handled: the batch confirmation of the
   * side-by-side tell load. @param reply where the count goes
   */
  public record Handled(Reply<Long> reply) implements Msg {}

  /** {@link Inc} messages handled by counters in this JVM. */
  public static final LongAdder HANDLED = new LongAdder();

  /**
   * The entity type; never passivated during a run. Its handlers never block and its senders may
   * run them: a local send to an idle counter is handled on the sending thread, and the rest runs
   * on the pod's shared drains, as a Pekko actor runs on its dispatcher.
   */
  public static final EntityType<Msg> TYPE =
      EntityType.of("counter", Msg.class).withIdleTime(Duration.ZERO).withInlineLocalSends();

  /**
   * The same type on the pod's shared drains only: no handler runs on a sender's thread. A pod
   * hosts one of these three; senders may use any.
   */
  public static final EntityType<Msg> SHARED_DRAINS =
      EntityType.of("counter", Msg.class).withIdleTime(Duration.ZERO).withNonBlockingHandlers();

  /**
   * The same type as Atoll runs a type by default: each counter with messages drained by a
   * virtual thread of its own.
   */
  public static final EntityType<Msg> OWN_THREADS = EntityType.of("counter", Msg.class).withIdleTime(Duration.ZERO);

  private long value;

  @Override
  public void onMessage(Msg msg, EntityContext ctx) {
    switch (msg) {
      case Inc i -> {
        value += i.by();
        HANDLED.increment();
      }
      case Get g -> g.reply().send(value);
      case Handled h -> h.reply().send(HANDLED.sum());
    }
  }
}
