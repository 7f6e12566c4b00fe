package io.atoll.runtime.internal.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.FencingToken;
import io.atoll.core.PodId;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.internal.codec.NoReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * One entity's mailbox and activation through its states, with a fake host that runs drains on
 * the test's thread: open, passivated (removed), closing for a hand-off, closed, fenced.
 */
class EntityInstanceTest {

  /** The host as an instance sees it; drains run when the test says. */
  static class FakeHost implements InstanceHost {
    long now = 1_000;
    boolean serving = true;
    final List<EntityInstance> started = Collections.synchronizedList(new ArrayList<>());
    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    long generation;
    /** Whether activated and deactivated throw, as an observer that throws would make them. */
    boolean throwing;
    /** Thrown once by the next deactivated, as an error outside the handler (a deep stack) would be. */
    Error deactivationError;
    /** Thrown once by the next hookFailed, as a logger on a deep stack would. */
    Error reportError;
    /** Whether the instance was busy (a drain held it) as each deactivation was reported. */
    final List<Boolean> busyWhenDeactivated = Collections.synchronizedList(new ArrayList<>());

    int queued;

    @Override
    public void queued(int delta) {
      queued += delta;
    }

    @Override
    public long now() {
      return now;
    }

    @Override
    public void start(EntityInstance instance) {
      started.add(instance);
    }

    @Override
    public boolean serving(ShardState shard, long at) {
      return serving;
    }

    @Override
    public FencingToken token(ShardState shard) {
      return new FencingToken(shard.shard, shard.epoch, generation);
    }

    @Override
    public io.atoll.core.spi.StoredState takeCarried(ShardState shard, FencingToken token, String type, String id) {
      return null;
    }

    @Override
    public void removed(EntityInstance instance) {
      events.add("removed");
    }

    @Override
    public void activated(EntityInstance instance) {
      events.add("activated");
      if (throwing) {
        throw new IllegalStateException("observer failed on activation");
      }
    }

    @Override
    public void deactivated(EntityInstance instance) {
      events.add("deactivated");
      busyWhenDeactivated.add(instance.busy());
      Error e = deactivationError;
      if (e != null) {
        deactivationError = null;
        throw e;
      }
      if (throwing) {
        throw new IllegalStateException("observer failed on deactivation");
      }
    }

    @Override
    public void hookFailed(EntityInstance instance, String hook, Throwable t) {
      events.add("hook failed");
      Error e = reportError;
      if (e != null) {
        reportError = null;
        throw e;
      }
    }

    @Override
    public void terminationFailed(EntityInstance instance, Throwable t) {
      events.add("termination failed");
    }

    /** Whether every message is too late to begin (what the pod's admission would say under overload). */
    volatile boolean late;
    /** How long each message taken waited, as the drains reported. */
    final List<Long> waits = Collections.synchronizedList(new ArrayList<>());
    /** The handler times reported. */
    final List<Long> handlerTimes = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void began(long waited, long at) {
      waits.add(waited);
    }

    @Override
    public boolean lateToBegin(TypeRuntime type, long at, long deadline) {
      return late;
    }

    @Override
    public void handlerTime(TypeRuntime type, long nanos, long at) {
      handlerTimes.add(nanos);
    }

    @Override
    public void refused(TypeRuntime type, io.atoll.runtime.OverloadCause cause) {
      events.add("refused " + cause);
    }

    @Override
    public PodId self() {
      return null;
    }

    @Override
    public Sharding sharding() {
      return null;
    }
  }

  /** A message in the mailbox that records its fate; read from the test's thread, written by drains. */
  static final class Msg implements Delivery {
    final String text;
    final long deadline;
    volatile String fate;
    private final CountDownLatch settled = new CountDownLatch(1);
    /** Runs when a drain takes the message, before anything is checked. */
    Runnable onTaken;
    private Delivery next;

    Msg(String text) {
      this(text, Long.MAX_VALUE);
    }

    Msg(String text, long deadline) {
      this.text = text;
      this.deadline = deadline;
    }

    @Override
    public Object message() {
      return text;
    }

    @Override
    public boolean isAsk() {
      return false;
    }

    @Override
    public long deadlineNanos() {
      return deadline;
    }

    @Override
    public boolean isDone() {
      return fate != null;
    }

    @Override
    public boolean begin() {
      if (onTaken != null) {
        onTaken.run();
      }
      return !isDone();
    }

    @Override
    public void handled() {
      settle("handled");
    }

    @Override
    public void failed(DeliveryException e) {
      settle("failed " + e.reason());
    }

    @Override
    public void bounce() {
      settle("bounced");
    }

    private void settle(String f) {
      fate = f;
      settled.countDown();
    }

    /** Its fate, once handled, failed or bounced (waits up to 10 s). */
    String awaitFate() throws InterruptedException {
      assertThat(settled.await(10, TimeUnit.SECONDS)).as("%s settled", text).isTrue();
      return fate;
    }

    @Override
    public Reply<Object> reply() {
      return NoReply.INSTANCE;
    }

    @Override
    public Delivery next() {
      return next;
    }

    @Override
    public void next(Delivery d) {
      next = d;
    }
  }

  private final FakeHost host = new FakeHost();
  private final List<String> handled = Collections.synchronizedList(new ArrayList<>());
  private final CountDownLatch hold = new CountDownLatch(1);
  private final CountDownLatch entered = new CountDownLatch(1);
  private final ShardState shard = new ShardState(7, 1);

  private EntityInstance instance(boolean withTermination) {
    return instance(withTermination ? "stop" : null);
  }

  private EntityInstance instance(String terminationMessage) {
    EntityType<String> type = EntityType.of("t", String.class);
    if (terminationMessage != null) {
      type = type.withTerminationMessage(terminationMessage);
    }
    EntityFactory<String> factory = ctx -> (msg, c) -> {
      if (msg.equals("boom")) {
        throw new IllegalStateException("boom");
      }
      if (msg.equals("hold")) {
        entered.countDown();
      }
      if (msg.equals("hold") && !hold.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test never let the handler go");
      }
      handled.add(msg);
    };
    @SuppressWarnings("unchecked")
    EntityFactory<Object> f = (EntityFactory<Object>) (EntityFactory<?>) factory;
    return new EntityInstance(host, shard, new TypeRuntime(type, null, f, 0), "e1");
  }

  private void drain(EntityInstance i) {
    host.started.remove(i);
    i.run();
  }

  @Test
  void theFirstMessageStartsOneDrainThatHandlesEverythingInOrder() {
    EntityInstance i = instance(false);
    Msg a = new Msg("a");
    Msg b = new Msg("b");
    Msg c = new Msg("c");
    assertThat(i.offer(a)).isEqualTo(EntityInstance.Offer.ACCEPTED);
    assertThat(i.offer(b)).isEqualTo(EntityInstance.Offer.ACCEPTED);
    assertThat(i.offer(c)).isEqualTo(EntityInstance.Offer.ACCEPTED);
    assertThat(host.started).containsExactly(i);
    assertThat(i.busy()).isTrue();
    drain(i);
    assertThat(handled).containsExactly("a", "b", "c");
    assertThat(List.of(a.fate, b.fate, c.fate)).containsOnly("handled");
    assertThat(host.events).containsExactly("activated");
    assertThat(i.busy()).isFalse();
    i.offer(new Msg("d"));
    assertThat(host.started).as("an idle instance starts a new drain").containsExactly(i);
  }

  @Test
  void aMessageTooLateToBeginIsRefusedAsOverloadedUnhandledAndTheNextIsHandled() {
    EntityInstance i = instance(false);
    Msg late = new Msg("late");
    late.onTaken = () -> host.late = true;
    Msg next = new Msg("next");
    next.onTaken = () -> host.late = false;
    i.offer(late);
    i.offer(next);
    drain(i);
    assertThat(late.fate).isEqualTo("failed OVERLOADED");
    assertThat(next.fate).isEqualTo("handled");
    assertThat(handled).as("the late message never reached the handler").containsExactly("next");
    assertThat(host.events).containsExactly("refused DEADLINE_AT_HANDLER", "activated");
    assertThat(host.handlerTimes).as("the one handler that ran was timed").hasSize(1);
    assertThat(i.busy()).isFalse();
  }

  @Test
  void anActivationTakesTheShardsEpochAsItsToken() {
    shard.epoch = 42;
    EntityInstance i = instance(false);
    i.offer(new Msg("a"));
    drain(i);
    assertThat(i.token().shard()).isEqualTo(7);
    assertThat(i.token().epoch()).isEqualTo(42);
  }

  @Test
  void anActivationAfterALeaseLapseCarriesTheNewLeaseGeneration() {
    shard.epoch = 42;
    EntityInstance i = instance(false);
    i.offer(new Msg("a"));
    drain(i);
    FencingToken first = i.token();
    i.fence();
    host.generation = 1; // the lease was granted anew after it ran out
    EntityInstance next = new EntityInstance(i);
    next.offer(new Msg("b"));
    drain(next);
    assertThat(next.token()).isGreaterThan(first);
    assertThat(next.token().epoch()).isEqualTo(42);
  }

  @Test
  void aSuccessorOfAFencedInstanceStartsOnlyAfterTheFencedHandlerReturned() throws Exception {
    EntityInstance i = instance(false);
    i.offer(new Msg("hold"));
    CompletableFuture<Void> first = CompletableFuture.runAsync(() -> drain(i));
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> host.events.contains("activated"));
    i.fence(); // the lease ran out while the handler runs
    assertThat(i.offer(new Msg("x"))).isEqualTo(EntityInstance.Offer.CLOSED);

    EntityInstance next = new EntityInstance(i);
    Msg b = new Msg("b");
    next.offer(b);
    CompletableFuture<Void> second = CompletableFuture.runAsync(() -> drain(next));
    Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
        .until(() -> b.fate == null && host.events.equals(List.of("activated")));
    hold.countDown();
    second.get(5, TimeUnit.SECONDS);
    first.get(5, TimeUnit.SECONDS);
    assertThat(handled).containsExactly("hold", "b");
    assertThat(host.events).as("the second activation began after the first ended")
        .containsExactly("activated", "deactivated", "removed", "activated");
  }

  @Test
  void aFenceWhileTheTerminationMessageRunsStillLetsTheSuccessorStartWhenItEnds() throws Exception {
    EntityInstance i = instance("hold"); // its termination message blocks until the test lets it go
    i.offer(new Msg("a"));
    drain(i);
    assertThat(i.passivateIfIdle(2_000)).isFalse();
    CompletableFuture<Void> first = CompletableFuture.runAsync(() -> drain(i));
    assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
    i.fence(); // the lease ran out while the termination message runs; a renewal serves the shard again

    EntityInstance next = new EntityInstance(i);
    Msg b = new Msg("b");
    next.offer(b);
    CompletableFuture<Void> second = CompletableFuture.runAsync(() -> drain(next));
    hold.countDown();
    first.get(5, TimeUnit.SECONDS);
    second.get(5, TimeUnit.SECONDS); // never returned before: the fenced activation's end was not told
    assertThat(handled).containsExactly("a", "hold", "b");
    assertThat(b.fate).isEqualTo("handled");
  }

  @Test
  void aHandOffOfAFencedInstanceIsDoneOnlyWhenItsRunningHandlerReturns() throws Exception {
    EntityInstance i = instance(false);
    i.offer(new Msg("hold"));
    CompletableFuture<Void> first = CompletableFuture.runAsync(() -> drain(i));
    assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
    i.fence(); // the lease ran out; it came back, and now the manager moves the shard away
    CountDownLatch done = new CountDownLatch(1);
    i.release(done);
    assertThat(done.getCount()).as("released while its handler still runs").isEqualTo(1);
    hold.countDown();
    first.get(5, TimeUnit.SECONDS);
    assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aFencedInstanceIsBusyUntilItsActivationHasEnded() throws Exception {
    EntityInstance i = instance(false);
    i.offer(new Msg("hold"));
    CompletableFuture<Void> first = CompletableFuture.runAsync(() -> drain(i));
    assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
    i.fence(); // the lease ran out while the handler runs; a release waits while the instance is busy
    assertThat(i.busy()).isTrue();
    hold.countDown();
    first.get(5, TimeUnit.SECONDS);
    assertThat(host.events).containsExactly("activated", "deactivated", "removed");
    assertThat(host.busyWhenDeactivated).as("a release waiting for the instance returns only after its end")
        .containsExactly(true);
    assertThat(i.busy()).isFalse();
  }

  @Test
  void anIdleInstanceWithoutTerminationMessageIsRemovedAtOnce() {
    EntityInstance i = instance(false);
    i.offer(new Msg("a"));
    drain(i);
    host.now = 5_000;
    assertThat(i.passivateIfIdle(500)).as("active after the idle mark").isFalse();
    assertThat(i.passivateIfIdle(2_000)).isTrue();
    assertThat(host.events).containsExactly("activated", "deactivated");
    assertThat(i.offer(new Msg("b"))).as("its shard makes a new instance").isEqualTo(EntityInstance.Offer.REMOVED);
  }

  @Test
  void passivationWithATerminationMessageRunsItLast() {
    EntityInstance i = instance(true);
    i.offer(new Msg("a"));
    drain(i);
    assertThat(i.passivateIfIdle(2_000)).as("removed only after its termination message").isFalse();
    drain(i);
    assertThat(handled).containsExactly("a", "stop");
    assertThat(host.events).containsExactly("activated", "deactivated", "removed");
    assertThat(i.offer(new Msg("b"))).isEqualTo(EntityInstance.Offer.REMOVED);
  }

  @Test
  void aReleaseHandlesWhatIsQueuedThenTheTerminationMessageAndRefusesTheRest() throws Exception {
    EntityInstance i = instance(true);
    Msg a = new Msg("a");
    Msg b = new Msg("b");
    i.offer(a);
    i.offer(b);
    CountDownLatch done = new CountDownLatch(1);
    i.release(done);
    Msg late = new Msg("late");
    assertThat(i.offer(late)).isEqualTo(EntityInstance.Offer.CLOSED);
    assertThat(done.getCount()).isEqualTo(1);
    drain(i);
    assertThat(handled).containsExactly("a", "b", "stop");
    assertThat(done.getCount()).isZero();
    assertThat(i.offer(new Msg("later"))).isEqualTo(EntityInstance.Offer.CLOSED);
    assertThat(host.events).containsExactly("activated", "deactivated");
  }

  @Test
  void releasingAnIdleInstanceWithoutTerminationClosesAtOnce() {
    EntityInstance i = instance(false);
    i.offer(new Msg("a"));
    drain(i);
    CountDownLatch done = new CountDownLatch(1);
    i.release(done);
    assertThat(done.getCount()).isZero();
    assertThat(host.started).isEmpty();
    assertThat(host.events).containsExactly("activated", "deactivated");
  }

  @Test
  void fencingBouncesEverythingQueuedWithoutTheTerminationMessage() {
    EntityInstance i = instance(true);
    Msg a = new Msg("a");
    i.offer(a);
    drain(i);
    Msg b = new Msg("b");
    Msg c = new Msg("c");
    i.offer(b);
    i.offer(c);
    i.fence();
    assertThat(b.fate).isEqualTo("bounced");
    assertThat(c.fate).isEqualTo("bounced");
    drain(i); // the drain that was due finds the instance closed and ends the activation
    assertThat(handled).containsExactly("a");
    assertThat(host.events).containsExactly("activated", "deactivated", "removed");
    assertThat(i.offer(new Msg("d"))).isEqualTo(EntityInstance.Offer.CLOSED);
  }

  @Test
  void aMessageFoundWhileTheShardIsNoLongerServedIsBouncedWithEverythingBehindIt() {
    EntityInstance i = instance(false);
    Msg a = new Msg("a");
    Msg b = new Msg("b");
    i.offer(a);
    i.offer(b);
    host.serving = false;
    drain(i);
    assertThat(handled).isEmpty();
    assertThat(a.fate).isEqualTo("bounced");
    assertThat(b.fate).isEqualTo("bounced");
    assertThat(host.events).contains("removed");
  }

  @Test
  void aLeaseThatRanOutWhileTheFactoryRanBouncesTheFirstMessageUnhandled() {
    EntityType<String> type = EntityType.of("t", String.class);
    EntityFactory<String> factory = ctx -> {
      host.serving = false; // the lease ran out while the activation started (a frozen process, a slow database)
      return (msg, c) -> handled.add(msg);
    };
    @SuppressWarnings("unchecked")
    EntityFactory<Object> f = (EntityFactory<Object>) (EntityFactory<?>) factory;
    EntityInstance i = new EntityInstance(host, shard, new TypeRuntime(type, null, f, 0), "e1");
    Msg a = new Msg("a");
    Msg b = new Msg("b");
    i.offer(a);
    i.offer(b);
    drain(i);
    assertThat(handled).isEmpty();
    assertThat(a.fate).isEqualTo("bounced");
    assertThat(b.fate).isEqualTo("bounced");
  }

  @Test
  void aMessageTakenJustBeforeAFenceIsBouncedEvenIfTheShardIsServedAgainByThen() {
    EntityInstance i = instance(true);
    i.offer(new Msg("a"));
    drain(i); // the activation runs
    Msg b = new Msg("b");
    b.onTaken = () -> {
      // The drain took b; before it looks at the lease, the lease runs out and the pod fences the
      // shard, then a renewal (or a new claim) serves the shard again: b's check passes.
      host.serving = false;
      i.fence();
      host.serving = true;
      host.generation++;
    };
    i.offer(b);
    drain(i);
    assertThat(handled).as("a fenced activation started a handler").containsExactly("a");
    assertThat(b.fate).isEqualTo("bounced");
    assertThat(host.events).contains("deactivated", "removed");
  }

  @Test
  void aFailingHandlerFailsItsMessageAndTheNextMessageGetsAFreshActivation() {
    EntityInstance i = instance(false);
    Msg boom = new Msg("boom");
    Msg after = new Msg("after");
    i.offer(boom);
    i.offer(after);
    drain(i);
    assertThat(boom.fate).isEqualTo("failed ENTITY_FAILED");
    assertThat(after.fate).isEqualTo("handled");
    assertThat(host.events).containsExactly("activated", "deactivated", "activated");
  }

  @Test
  void aMessagePastItsDeadlineInTheMailboxFailsWithTimeout() {
    EntityInstance i = instance(false);
    Msg stale = new Msg("stale", 500);
    Msg fresh = new Msg("fresh");
    i.offer(stale);
    i.offer(fresh);
    drain(i);
    assertThat(stale.fate).isEqualTo("failed TIMEOUT");
    assertThat(handled).containsExactly("fresh");
  }

  @Test
  void aMessageWhoseSenderStoppedWaitingIsSkipped() {
    EntityInstance i = instance(false);
    Msg gone = new Msg("gone");
    gone.fate = "answered elsewhere";
    i.offer(gone);
    drain(i);
    assertThat(handled).isEmpty();
    assertThat(host.events).isEmpty();
  }

  @Test
  void aHostCallbackThatThrowsNeitherWedgesTheInstanceNorDropsAMessage() throws Exception {
    host.throwing = true;
    EntityInstance i = instance(true);
    Msg a = new Msg("a");
    Msg boom = new Msg("boom");
    Msg b = new Msg("b");
    i.offer(a);
    i.offer(boom);
    i.offer(b);
    drain(i);
    assertThat(a.fate).as("handled, though the activation's report threw").isEqualTo("handled");
    assertThat(boom.fate).isEqualTo("failed ENTITY_FAILED");
    assertThat(b.fate).isEqualTo("handled");
    assertThat(i.busy()).as("the drain ended: the instance is not wedged").isFalse();
    Msg c = new Msg("c");
    assertThat(i.offer(c)).isEqualTo(EntityInstance.Offer.ACCEPTED);
    drain(i);
    assertThat(c.fate).isEqualTo("handled");
    CountDownLatch done = new CountDownLatch(1);
    i.release(done);
    drain(i);
    assertThat(done.await(5, TimeUnit.SECONDS)).as("a hand-off still finishes").isTrue();
    assertThat(handled).containsExactly("a", "b", "c", "stop");
    assertThat(host.events).contains("hook failed");
  }
}
