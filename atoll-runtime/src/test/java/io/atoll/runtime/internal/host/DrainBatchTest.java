package io.atoll.runtime.internal.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.internal.codec.NoReply;
import io.atoll.runtime.internal.host.EntityInstanceTest.FakeHost;
import io.atoll.runtime.internal.util.Draining;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * How a drain takes its mailbox: a message at a time (a fence meeting the one in hand), the
 * senders' bookkeeping deferred to the drain's return or a stop marker, and a drain run on the
 * sender's own thread ({@link EntityInstance#runHere}). The fake host runs drains on the test's
 * thread.
 */
class DrainBatchTest {

  private final FakeHost host = new FakeHost();
  private final ShardState shard = new ShardState(7, 1);
  /** What happened, in order: handled messages, bounces, flushes. */
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private final List<Thread> handlerThreads = Collections.synchronizedList(new ArrayList<>());
  /** Set by a test: the instance a handler's "fan" message offers more messages to. */
  private EntityInstance fanTo;

  /** A delivery that logs its fate, and hands its bookkeeping to a {@link Books} when deferred. */
  private class Rec implements Delivery {
    final String text;
    private Delivery next;

    Rec(String text) {
      this.text = text;
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
      return Long.MAX_VALUE;
    }

    @Override
    public boolean isDone() {
      return false;
    }

    @Override
    public void handled() {
      log.add("acked " + text);
    }

    @Override
    public Deferred handled(Deferred open) {
      Books b = open == null ? new Books() : (Books) open;
      b.texts.add(text);
      return b;
    }

    @Override
    public void failed(DeliveryException e) {
      log.add("failed " + text);
    }

    @Override
    public void bounce() {
      log.add("bounced " + text);
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

  /** The deferred bookkeeping of one batch. */
  private final class Books implements Deferred {
    final List<String> texts = new ArrayList<>();

    @Override
    public void flush() {
      log.add("flush " + String.join(",", texts));
    }
  }

  private EntityInstance instance(boolean nonBlocking, String terminationMessage) {
    EntityType<String> type = EntityType.of("t", String.class);
    if (nonBlocking) {
      type = type.withNonBlockingHandlers();
    }
    if (terminationMessage != null) {
      type = type.withTerminationMessage(terminationMessage);
    }
    EntityFactory<String> factory = ctx -> (msg, c) -> {
      handlerThreads.add(Thread.currentThread());
      log.add(msg + (Thread.currentThread().isInterrupted() ? " (interrupted)" : ""));
      if (msg.equals("fan")) {
        for (int n = 0; n < 20; n++) {
          assertThat(fanTo.offer(new Rec("m" + n))).isEqualTo(EntityInstance.Offer.ACCEPTED);
        }
      }
      if (msg.equals("interrupt me")) {
        Thread.currentThread().interrupt();
      }
    };
    @SuppressWarnings("unchecked")
    EntityFactory<Object> f = (EntityFactory<Object>) (EntityFactory<?>) factory;
    return new EntityInstance(host, shard, new TypeRuntime(type, null, f, 0), "e1");
  }

  private void drain(EntityInstance i) {
    host.started.remove(i);
    i.run();
  }

  /** An instance of a type whose local sends may run on the sender, activated and idle. */
  private EntityInstance active() {
    EntityInstance i = instance(true, null);
    i.offer(new Rec("warm"));
    drain(i);
    log.clear();
    handlerThreads.clear();
    return i;
  }

  @Test
  void aFenceBouncesWhatIsQueuedAtOnceAndTheMessageInTheDrainsHandAfter() {
    EntityInstance i = instance(false, null);
    Rec a = new Rec("a") {
      @Override
      public boolean begin() {
        i.fence(); // as the drain takes the first message, the rest already in its hands
        return true;
      }
    };
    i.offer(a);
    i.offer(new Rec("b"));
    i.offer(new Rec("c"));
    drain(i);
    // b and c leave with the fence itself, so a send after it (the shard served again) cannot
    // reach a successor before they are back in their route's buffer.
    assertThat(log).containsExactly("bounced b", "bounced c", "bounced a");
    assertThat(host.events).as("no activation started after the fence").containsExactly("removed");
    assertThat(i.busy()).isFalse();
    assertThat(host.queued).isZero();
  }

  @Test
  void aPassivationsStopMarkerEndsItsBatchSoAMessageBehindItGetsANewActivation() {
    EntityInstance i = instance(false, "stop");
    i.offer(new Rec("a"));
    drain(i);
    assertThat(i.passivateIfIdle(host.now + 1)).isFalse(); // queues its termination message
    i.offer(new Rec("b")); // behind the marker, in the same mailbox
    drain(i);
    assertThat(log).containsExactly("a", "acked a", "stop", "b", "acked b");
    assertThat(host.events).containsExactly("activated", "deactivated", "activated");
    assertThat(host.queued).isZero();
  }

  @Test
  void onSharedDrainsTheSendersBookkeepingIsDoneOncePerBatchAndBeforeAStopMarker() {
    EntityInstance i = instance(true, "stop");
    i.offer(new Rec("a"));
    i.offer(new Rec("b"));
    i.offer(new Rec("c"));
    assertThat(i.drain(16)).isFalse();
    assertThat(log).containsExactly("a", "b", "c", "flush a,b,c");

    log.clear();
    i.offer(new Rec("d"));
    i.offer(new Rec("e"));
    CountDownLatch released = new CountDownLatch(1);
    i.release(released); // its stop marker behind e
    assertThat(i.drain(16)).isFalse();
    assertThat(log).containsExactly("d", "e", "flush d,e", "stop");
    assertThat(released.getCount()).isZero();
  }

  @Test
  void aBatchIsAtMostTheDrainsShareAndTheRestWaitsForItsNextTurn() {
    EntityInstance i = instance(true, null);
    for (int n = 0; n < 5; n++) {
      i.offer(new Rec("m" + n));
    }
    assertThat(i.drain(3)).as("messages left: still scheduled").isTrue();
    assertThat(log).containsExactly("m0", "m1", "m2", "flush m0,m1,m2");
    assertThat(host.queued).isEqualTo(2);
    assertThat(i.drain(3)).isFalse();
    assertThat(log).endsWith("m3", "m4", "flush m3,m4");
    assertThat(host.queued).isZero();
  }

  @Test
  void aTypeWhoseHandlersMayBlockAcknowledgesEachMessageAsItIsHandled() {
    EntityInstance i = instance(false, null);
    i.offer(new Rec("a"));
    i.offer(new Rec("b"));
    drain(i);
    assertThat(log).containsExactly("a", "acked a", "b", "acked b");
  }

  @Test
  void aSenderRunsItsOwnMessageOnlyAndLeavesWhatCameMeanwhileToTheDrains() throws Exception {
    EntityInstance i = active();
    fanTo = i;
    Rec fan = new Rec("fan");
    assertThat(i.offer(fan, 1000, true)).isEqualTo(EntityInstance.Offer.RUN_HERE);
    assertThat(host.started).as("no drain started: the sender runs it").isEmpty();
    assertThat(host.queued).as("not linked: handed to the sender's drain").isZero();
    i.runHere(fan, Draining.mark());
    assertThat(handlerThreads).containsExactly(Thread.currentThread());
    assertThat(log).as("acknowledged at once, not deferred").containsExactly("fan", "acked fan");
    assertThat(host.started).as("the 20 that came meanwhile go to the pod's drains").containsExactly(i);
    assertThat(i.busy()).isTrue();

    Thread drain = Thread.ofPlatform().start(() -> drain(i));
    drain.join(10_000);
    assertThat(drain.isAlive()).isFalse();
    List<String> handled = log.stream().filter(s -> !s.startsWith("flush") && !s.startsWith("acked")).toList();
    List<String> expected = new ArrayList<>(List.of("fan"));
    for (int n = 0; n < 20; n++) {
      expected.add("m" + n);
    }
    assertThat(handled).isEqualTo(expected);
    assertThat(handlerThreads.subList(1, handlerThreads.size())).hasSize(20).containsOnly(drain);
    assertThat(host.queued).isZero();
    assertThat(i.busy()).isFalse();
  }

  @Test
  void aFenceAsTheSendersOwnDrainTakesItsMessageBouncesIt() {
    EntityInstance i = active();
    Rec a = new Rec("a") {
      @Override
      public boolean begin() {
        i.fence();
        return true;
      }
    };
    assertThat(i.offer(a, 1000, true)).isEqualTo(EntityInstance.Offer.RUN_HERE);
    i.runHere(a, Draining.mark());
    assertThat(log).containsExactly("bounced a");
    assertThat(host.events).containsExactly("activated", "deactivated", "removed");
    assertThat(i.busy()).isFalse();
    assertThat(i.offer(new Rec("b"), 1000, true)).as("closed: the shard makes a successor")
        .isEqualTo(EntityInstance.Offer.CLOSED);
  }

  @Test
  void anInstanceThatIsBusyNotYetActiveOrWaitsForAFencedPredecessorIsNeverRunBySender() {
    EntityInstance fresh = instance(true, null);
    assertThat(fresh.offer(new Rec("first"), 1000, true)).as("its factory runs on a drain")
        .isEqualTo(EntityInstance.Offer.ACCEPTED);
    assertThat(host.started).containsExactly(fresh);
    host.started.clear();

    EntityInstance i = active();
    i.offer(new Rec("a")); // a drain is due
    assertThat(i.offer(new Rec("b"), 1000, true)).isEqualTo(EntityInstance.Offer.ACCEPTED);

    EntityInstance fenced = instance(true, null);
    fenced.fence();
    EntityInstance successor = new EntityInstance(fenced);
    assertThat(successor.offer(new Rec("c"), 1000, true)).isEqualTo(EntityInstance.Offer.ACCEPTED);
    assertThat(host.started).containsExactly(i, successor);
  }

  @Test
  void aSendersInterruptIsHiddenFromTheHandlerAndKeptAndOneDuringTheHandlerStaysWithTheSender() {
    EntityInstance i = active();
    Thread.currentThread().interrupt();
    Rec a = new Rec("a");
    assertThat(i.offer(a, 1000, true)).isEqualTo(EntityInstance.Offer.RUN_HERE);
    i.runHere(a, Draining.mark());
    assertThat(Thread.interrupted()).as("the sender's interrupt is kept").isTrue();
    assertThat(log).startsWith("a");

    Rec b = new Rec("interrupt me");
    assertThat(i.offer(b, 1000, true)).isEqualTo(EntityInstance.Offer.RUN_HERE);
    i.runHere(b, Draining.mark());
    assertThat(Thread.interrupted()).as("an interrupt while the handler ran stays with the sender").isTrue();
  }

  @Test
  void anErrorOutsideTheHandlerHandsTheDrainToThePodsDrainsAndTheRestIsHandled() {
    EntityInstance i = active();
    Rec a = new Rec("a") {
      @Override
      public void handled() {
        throw new StackOverflowError("the sender's stack is deep");
      }
    };
    assertThat(i.offer(a, 1000, true)).isEqualTo(EntityInstance.Offer.RUN_HERE);
    i.offer(new Rec("c")); // behind a, while the sender holds the drain
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> i.runHere(a, Draining.mark()))
        .isInstanceOf(StackOverflowError.class);
    assertThat(host.started).as("the drain passed on, not dropped").containsExactly(i);
    assertThat(i.busy()).isTrue();
    drain(i);
    assertThat(log).containsExactly("a", "c", "flush c");
    assertThat(i.busy()).isFalse();
  }

  @Test
  void anErrorInTheDeferredBookkeepingHandsTheDrainOverWhileItStillHoldsTheInstance() {
    EntityInstance i = instance(true, null);
    Rec x = new Rec("x") {
      @Override
      public Deferred handled(Deferred open) {
        return () -> {
          throw new StackOverflowError("deep");
        };
      }
    };
    i.offer(x);
    host.started.clear();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> i.drain(16)).isInstanceOf(StackOverflowError.class);
    assertThat(host.started).as("the drain passed on, not dropped").containsExactly(i);
    assertThat(i.busy()).isTrue();
    i.offer(new Rec("y"));
    assertThat(i.drain(16)).isFalse();
    assertThat(log).containsExactly("x", "y", "flush y");
    assertThat(i.busy()).isFalse();
  }

  @Test
  void anErrorEndingAPassivatedActivationStillRemovesTheInstanceAndGivesItUp() {
    EntityInstance i = instance(true, "stop");
    i.offer(new Rec("a"));
    drain(i);
    assertThat(i.passivateIfIdle(host.now + 1)).isFalse(); // queues its termination message
    host.started.clear();
    host.deactivationError = new StackOverflowError("deep");
    assertThatThrownBy(() -> i.drain(16)).isInstanceOf(StackOverflowError.class);
    assertThat(i.busy()).as("given up, not left scheduled with no drain to come").isFalse();
    assertThat(host.started).isEmpty();
    assertThat(host.events).endsWith("deactivated", "removed");
  }

  @Test
  void anErrorEndingAReleasedActivationStillCountsTheReleaseDown() {
    EntityInstance i = instance(true, "stop");
    i.offer(new Rec("a"));
    drain(i);
    CountDownLatch released = new CountDownLatch(1);
    i.release(released);
    host.started.clear();
    host.deactivationError = new StackOverflowError("deep");
    assertThatThrownBy(() -> i.drain(16)).isInstanceOf(StackOverflowError.class);
    assertThat(released.getCount()).as("the hand-off is not left waiting").isZero();
    assertThat(i.busy()).isFalse();
    assertThat(host.started).as("given up, not handed to a second drain").isEmpty();
  }

  @Test
  void aReportOfADeliverysFailureThatThrowsHandsTheDrainOver() {
    EntityInstance i = instance(false, null);
    Rec a = new Rec("a") {
      @Override
      public void handled() {
        throw new IllegalStateException("the sender's callback failed");
      }
    };
    i.offer(a);
    i.offer(new Rec("b"));
    host.started.clear();
    host.reportError = new StackOverflowError("deep");
    assertThatThrownBy(() -> i.drain(16)).isInstanceOf(StackOverflowError.class);
    assertThat(host.started).as("the drain passed on, not dropped").containsExactly(i);
    assertThat(i.busy()).isTrue();
    drain(i);
    assertThat(log).containsExactly("a", "b", "acked b");
    assertThat(i.busy()).isFalse();
  }

  @Test
  void anErrorEndingAnActivationWithMessagesBehindItsStopMarkerHandsThemToThePodsDrains() {
    EntityInstance i = instance(true, "stop");
    i.offer(new Rec("a"));
    drain(i);
    assertThat(i.passivateIfIdle(host.now + 1)).isFalse();
    i.offer(new Rec("b")); // behind the marker
    host.started.clear();
    log.clear();
    host.deactivationError = new StackOverflowError("deep");
    assertThatThrownBy(() -> i.drain(16)).isInstanceOf(StackOverflowError.class);
    assertThat(host.started).as("the drain passed on, not dropped").containsExactly(i);
    assertThat(i.busy()).isTrue();
    drain(i);
    assertThat(log).containsExactly("stop", "b", "flush b");
    assertThat(host.events).endsWith("deactivated", "activated");
    assertThat(i.busy()).isFalse();
  }

  @Test
  void anErrorEndingAFencedActivationStillLetsItsSuccessorStart() {
    EntityInstance i = active();
    Rec a = new Rec("a") {
      @Override
      public boolean begin() {
        i.fence(); // as the drain takes it: the drain ends the activation
        return true;
      }
    };
    i.offer(a);
    host.deactivationError = new StackOverflowError("deep");
    assertThatThrownBy(() -> i.drain(16)).isInstanceOf(StackOverflowError.class);
    assertThat(log).containsExactly("bounced a");
    assertThat(host.events).endsWith("deactivated", "removed");
    assertThat(i.busy()).isFalse();
    // A successor waits for this; it must not wait forever.
    assertTimeoutPreemptively(Duration.ofSeconds(10), i::awaitEnded);
  }
}
