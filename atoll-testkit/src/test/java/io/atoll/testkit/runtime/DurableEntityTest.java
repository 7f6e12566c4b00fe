package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.FencingToken;
import io.atoll.core.spi.ForwardingStateStore;
import io.atoll.core.spi.InMemoryStateStore;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.core.spi.StoredState;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Durable;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Durable entities in an in-JVM cluster over gRPC on loopback: their state outlives a shard's
 * move to a joining pod, a passivation and a failed save; a stale activation never writes.
 */
class DurableEntityTest {

  sealed interface Msg permits Inc, Get, IncThenThrow, IncCatchingFailure {}

  /** Adds one, saves, and answers the new count. */
  record Inc(Reply<Long> reply) implements Msg {}

  record Get(Reply<Long> reply) implements Msg {}

  /** Sets the count one higher, then fails before the handler returns. */
  record IncThenThrow(Reply<Long> reply) implements Msg {}

  /** Adds one; if the save fails, swallows the failure and returns without answering. */
  record IncCatchingFailure(Reply<Long> reply) implements Msg {}

  record Count(long n) {}

  static final EntityType<Msg> TYPE = EntityType.of("durable-counter", Msg.class);

  /** The store of the test, with faults that a test switches on. */
  final FaultyStore store = new FaultyStore(new InMemoryStateStore());
  LocalCluster cluster;

  static void handle(Msg msg, io.atoll.runtime.DurableContext<Count> ctx) throws Exception {
    switch (msg) {
      case Inc i -> {
        ctx.setState(new Count(ctx.state().n() + 1));
        ctx.persist();
        i.reply().send(ctx.state().n());
      }
      case Get g -> g.reply().send(ctx.state().n());
      case IncThenThrow i -> {
        ctx.setState(new Count(ctx.state().n() + 1));
        throw new IllegalStateException("failing on purpose");
      }
      case IncCatchingFailure i -> {
        ctx.setState(new Count(ctx.state().n() + 1));
        try {
          ctx.persist();
        } catch (StateStoreException swallowed) {
          return; // and answers nothing: the message must fail anyway
        }
        i.reply().send(ctx.state().n());
      }
    }
  }

  LocalCluster start(Duration idle) {
    cluster = LocalCluster.builder().shards(30)
        .podTemplate(b -> b.register(TYPE.withIdleTime(idle), Durable.entity(store, Count.class, new Count(0),
            DurableEntityTest::handle)))
        .start();
    return cluster;
  }

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static long ask(Sharding from, String id, java.util.function.Function<Reply<Long>, Msg> msg) {
    return from.entity(TYPE, id).<Long>ask(msg::apply).toCompletableFuture().orTimeout(20, TimeUnit.SECONDS).join();
  }

  static DeliveryException failure(Sharding from, String id, java.util.function.Function<Reply<Long>, Msg> msg) {
    CompletableFuture<Long> f = from.entity(TYPE, id).<Long>ask(msg::apply).toCompletableFuture();
    try {
      f.orTimeout(20, TimeUnit.SECONDS).join();
    } catch (CompletionException e) {
      assertThat(e.getCause()).isInstanceOf(DeliveryException.class);
      return (DeliveryException) e.getCause();
    }
    throw new AssertionError("the ask to " + id + " was answered (expected: a failure)");
  }

  @Test
  void countersKeepCountingWhenTheirShardsMoveToAJoiningPod() {
    start(Duration.ZERO);
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ids.add("c" + i);
    }
    for (int round = 1; round <= 5; round++) {
      for (String id : ids) {
        assertThat(ask(a, id, Inc::new)).isEqualTo(round);
      }
    }
    Sharding c = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(30));
    await().atMost(Duration.ofSeconds(10)).until(() -> !c.servedShards().isEmpty());
    for (String id : ids) {
      assertThat(ask(b, id, Inc::new)).as(id).isEqualTo(6);
    }
    assertThat(c.activeEntities()).as("counters that moved to the new pod").isPositive();
  }

  @Test
  void aJoiningPodStartsTheCountersItTakesFromStatesCarriedInTheHandOffWithoutReadingTheStore() {
    start(Duration.ZERO);
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    for (int round = 1; round <= 3; round++) {
      for (int i = 0; i < 60; i++) {
        assertThat(ask(a, "m" + i, Inc::new)).isEqualTo(round);
      }
    }
    int claimsBefore = store.claims.get();
    Sharding c = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(30));
    for (int i = 0; i < 60; i++) {
      assertThat(ask(b, "m" + i, Inc::new)).as("m" + i).isEqualTo(4);
    }
    // The counters that moved started on the new pod from what their old owners carried: no read.
    assertThat(c.activeEntities()).isPositive();
    assertThat(store.claims.get()).isEqualTo(claimsBefore);
    // And their saves were conditional on the carried revision: the store has what was answered.
    for (int i = 0; i < 60; i++) {
      assertThat(ask(c, "m" + i, Get::new)).isEqualTo(4);
    }
  }

  @Test
  void aPassivatedCounterReadsItsCountAgainOnItsNextMessage() {
    start(Duration.ofMillis(300));
    Sharding a = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    assertThat(ask(a, "p", Inc::new)).isEqualTo(1);
    assertThat(ask(a, "p", Inc::new)).isEqualTo(2);
    await().atMost(Duration.ofSeconds(10)).until(() -> a.activeEntities() == 0);
    assertThat(ask(a, "p", Get::new)).isEqualTo(2);
    assertThat(ask(a, "p", Inc::new)).isEqualTo(3);
  }

  @Test
  void aSaveWhoseAnswerWasLostFailsTheMessageAndTheNextActivationReadsWhatWasWritten() {
    start(Duration.ZERO);
    Sharding a = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    assertThat(ask(a, "l", Inc::new)).isEqualTo(1);
    store.loseNextSaveAnswer.set(true);
    DeliveryException e = failure(a, "l", Inc::new);
    assertThat(e.reason()).isEqualTo(DeliveryException.Reason.ENTITY_FAILED);
    assertThat(e.getMessage()).contains("answer lost on purpose");
    // The write did happen: the new activation starts from revision 2.
    assertThat(ask(a, "l", Get::new)).isEqualTo(2);
    assertThat(ask(a, "l", Inc::new)).isEqualTo(3);
  }

  @Test
  void aHandlerThatThrowsSavesNothingAndOneThatSwallowsAFailedSaveStillFailsItsMessage() {
    start(Duration.ZERO);
    Sharding a = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    assertThat(ask(a, "t", Inc::new)).isEqualTo(1);
    assertThat(failure(a, "t", IncThenThrow::new).getMessage()).contains("failing on purpose");
    assertThat(ask(a, "t", Get::new)).isEqualTo(1);
    store.refuseNextSave.set(true);
    DeliveryException e = failure(a, "t", IncCatchingFailure::new);
    assertThat(e.reason()).isEqualTo(DeliveryException.Reason.ENTITY_FAILED);
    assertThat(e.getMessage()).contains("was not saved").contains("store down on purpose");
    assertThat(ask(a, "t", Get::new)).isEqualTo(1);
  }

  @Test
  void anActivationFencedByANewerClaimCannotWriteAndSaysSo() throws Exception {
    start(Duration.ZERO);
    Sharding a = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    assertThat(ask(a, "f", Inc::new)).isEqualTo(1);
    // Another activation, newer than any this cluster hands out, claims the counter.
    store.claim(TYPE.name(), "f", new FencingToken(0, Long.MAX_VALUE / 2, 0));
    DeliveryException e = failure(a, "f", Inc::new);
    assertThat(e.reason()).isEqualTo(DeliveryException.Reason.ENTITY_FAILED);
    assertThat(e.getMessage()).contains("newer than this activation's");
    assertThat(store.claim(TYPE.name(), "f", new FencingToken(0, Long.MAX_VALUE / 2, 0)).revision()).isEqualTo(1);
    // A new activation is fenced at its claim, before it handles anything.
    assertThat(failure(a, "f", Get::new).getMessage()).contains("could not start").contains("newer");
  }

  @Test
  void aStateTheCodecCannotReadFailsTheActivationNamingTheEntity() throws Exception {
    start(Duration.ZERO);
    Sharding a = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    store.save(TYPE.name(), "g", new FencingToken(0, 0, 0), 0, new byte[] {1, 2, 3});
    DeliveryException e = failure(a, "g", Get::new);
    assertThat(e.getMessage()).contains("durable-counter/g").contains("revision 1").contains("cannot be decoded");
  }

  /** Forwards to a store, losing or refusing a save when told to, and counting claims. */
  static final class FaultyStore extends ForwardingStateStore {
    final AtomicInteger claims = new AtomicInteger();
    final java.util.concurrent.atomic.AtomicBoolean loseNextSaveAnswer = new java.util.concurrent.atomic.AtomicBoolean();
    final java.util.concurrent.atomic.AtomicBoolean refuseNextSave = new java.util.concurrent.atomic.AtomicBoolean();

    FaultyStore(StateStore inner) {
      super(inner);
    }

    @Override
    public StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
      claims.incrementAndGet();
      return super.claim(type, id, token);
    }

    @Override
    public long save(String type, String id, FencingToken token, long revision, byte[] state) throws StateStoreException {
      if (refuseNextSave.compareAndSet(true, false)) {
        throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, "store down on purpose");
      }
      long r = super.save(type, id, token, revision, state);
      if (loseNextSaveAnswer.compareAndSet(true, false)) {
        throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, "answer lost on purpose");
      }
      return r;
    }
  }
}
