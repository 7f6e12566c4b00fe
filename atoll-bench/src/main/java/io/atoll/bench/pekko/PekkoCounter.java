package io.atoll.bench.pekko;

import java.util.concurrent.atomic.LongAdder;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * The Pekko peer's entity: the same counter as {@link io.atoll.bench.cluster.BenchCounter}, as
 * Pekko users write it (typed actor, messages serialized with Jackson CBOR). Public for the
 * command line; not API.
 */
public final class PekkoCounter {

  /** Marks the messages Jackson CBOR serializes (bound in {@link PekkoNode}'s config). */
  public interface CborSerializable {}

  /** Its messages. */
  public sealed interface Msg extends CborSerializable permits Inc, Get, Handled {}

  /** Adds to the counter (sent with tell; no acknowledgement). @param by the amount */
  public record Inc(long by) implements Msg {}

  /** Answers the value (sent with ask). @param replyTo where the value goes */
  public record Get(ActorRef<Value> replyTo) implements Msg {}

  /**
   * Answers how many {@link Inc} this JVM's counters have handled: the batch confirmation of the
   * tell load. @param replyTo where the count goes
   */
  public record Handled(ActorRef<Value> replyTo) implements Msg {}

  /** A reply. @param value the value */
  public record Value(long value) implements CborSerializable {}

  /** The entity type. */
  public static final EntityTypeKey<Msg> TYPE = EntityTypeKey.create(Msg.class, "counter");

  /** {@link Inc} messages handled by counters in this JVM. */
  public static final LongAdder HANDLED = new LongAdder();

  private PekkoCounter() {}

  /** A counter starting at zero. */
  public static Behavior<Msg> create() {
    return counter(0);
  }

  private static Behavior<Msg> counter(long start) {
    // One mutable cell per entity, as a Pekko user would keep a counter's state.
    long[] value = {start};
    return Behaviors.receive(Msg.class)
        .onMessage(Inc.class, m -> {
          value[0] += m.by();
          HANDLED.increment();
          return Behaviors.same();
        })
        .onMessage(Get.class, m -> {
          m.replyTo().tell(new Value(value[0]));
          return Behaviors.same();
        })
        .onMessage(Handled.class, m -> {
          m.replyTo().tell(new Value(HANDLED.sum()));
          return Behaviors.same();
        })
        .build();
  }
}
