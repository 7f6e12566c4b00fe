package io.atoll.bench.cluster;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import java.time.Duration;

/** The benchmarks' entity: a counter, as in the Pekko baseline. Public for JMH; not API. */
public final class BenchCounter implements Entity<BenchCounter.Msg> {

  /** Its messages. */
  public sealed interface Msg permits Inc, Get {}

  /** Adds to the counter (sent with tell). @param by the amount */
  public record Inc(long by) implements Msg {}

  /** Answers the value (sent with ask). @param reply where the value goes */
  public record Get(Reply<Long> reply) implements Msg {}

  /** The entity type; never passivated during a run. */
  public static final EntityType<Msg> TYPE = EntityType.of("counter", Msg.class).withIdleTime(Duration.ZERO);

  private long value;

  @Override
  public void onMessage(Msg msg, EntityContext ctx) {
    switch (msg) {
      case Inc i -> value += i.by();
      case Get g -> g.reply().send(value);
    }
  }
}
