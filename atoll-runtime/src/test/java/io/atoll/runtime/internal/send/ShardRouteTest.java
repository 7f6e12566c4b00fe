package io.atoll.runtime.internal.send;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.runtime.DeliveryException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One shard's sending side, with a fake router: order, buffering, refusals and hand-offs. */
class ShardRouteTest {

  static final PodId A = new PodId(new PodAddress("a", 1), 1);
  static final PodId B = new PodId(new PodAddress("b", 2), 2);

  /** The router as a route sees it: an owner, a claim epoch, and a record of dispatches. */
  static final class FakeRouter implements ShardRoute.Callback {
    volatile PodId owner;
    volatile long epoch = 1;
    volatile boolean refuseAtOnce;
    final List<Pending> dispatched = new ArrayList<>();
    final List<PodId> to = new ArrayList<>();
    final Set<ShardRoute> holding = new HashSet<>();

    @Override
    public PodId ownerOf(int shard) {
      return owner;
    }

    @Override
    public long claimEpoch(int shard) {
      return epoch;
    }

    @Override
    public synchronized boolean dispatch(Pending p, PodId target) {
      if (refuseAtOnce) {
        return false;
      }
      dispatched.add(p);
      to.add(target);
      return true;
    }

    @Override
    public synchronized void holding(ShardRoute route, boolean on) {
      if (on) {
        holding.add(route);
      } else {
        holding.remove(route);
      }
    }

    synchronized List<Pending> takeDispatched() {
      List<Pending> out = new ArrayList<>(dispatched);
      dispatched.clear();
      to.clear();
      return out;
    }
  }

  private final Fakes.VirtualTime time = new Fakes.VirtualTime();
  private final FakeRouter router = new FakeRouter();
  private final Fakes.Owner owner = new Fakes.Owner();
  private final ShardRoute route = route(100);

  private ShardRoute route(int bufferSize) {
    ShardRoute r = new ShardRoute(1, bufferSize, time, time, router);
    owner.route = r;
    return r;
  }

  private Pending send(String m) {
    Pending p = Fakes.pending(owner, time.nanoTime(), 10_000, m);
    route.send(p);
    return p;
  }

  private static List<String> messages(List<Pending> ps) {
    List<String> out = new ArrayList<>();
    for (Pending p : ps) {
      out.add((String) p.message);
    }
    return out;
  }

  private void handled(Pending p) {
    p.handled(); // a tell: completes it and reports it resolved
  }

  @Test
  void sendsGoStraightToTheOwnerInSendOrder() {
    router.owner = A;
    Pending a = send("1");
    Pending b = send("2");
    send("3");
    assertThat(messages(router.dispatched)).containsExactly("1", "2", "3");
    assertThat(router.to).containsOnly(A);
    assertThat(router.holding).isEmpty();
    handled(a);
    handled(b);
    assertThat(a).isCompleted();
    assertThat(owner.completed).containsExactly(a, b);
  }

  @Test
  void aBatchHandledOnADrainResolvesItsMessagesAtOnceAndOnlyThenLetsAMoveGoOn() {
    router.owner = A;
    Pending a = send("1");
    Pending b = send("2");
    Pending c = send("3");
    router.takeDispatched();
    router.owner = B; // moved: "4" must wait until 1..3 are resolved at A
    send("4");
    assertThat(router.dispatched).isEmpty();

    io.atoll.runtime.internal.host.Deferred open = a.handled(null);
    open = b.handled(open);
    assertThat(open).isInstanceOf(HandledBatch.class);
    assertThat(((HandledBatch) open).head).as("one batch for one router and shard").isSameAs(a);
    assertThat(a.nextHandled).isSameAs(b);
    assertThat(a).as("acknowledged at once, not at the flush").isCompleted();
    assertThat(owner.completed).as("the bookkeeping waits for the flush").isEmpty();
    open.flush();
    assertThat(owner.completed).containsExactly(a, b);
    assertThat(router.dispatched).as("3 is still unresolved at A").isEmpty();

    c.handled(null).flush();
    assertThat(messages(router.dispatched)).containsExactly("4");
    assertThat(router.to).containsExactly(B);
    assertThat(owner.completed).containsExactly(a, b, c);
  }

  @Test
  void waitsWithoutAnOwnerThenFlushesInSendOrder() {
    for (int i = 1; i <= 5; i++) {
      send(Integer.toString(i));
    }
    assertThat(router.dispatched).isEmpty();
    assertThat(router.holding).containsExactly(route);
    route.kick(); // nothing changed: still no owner
    assertThat(router.dispatched).isEmpty();
    router.owner = A;
    route.kick();
    assertThat(messages(router.dispatched)).containsExactly("1", "2", "3", "4", "5");
    assertThat(router.dispatched).noneMatch(p -> p.resume);
    assertThat(router.holding).isEmpty();
  }

  @Test
  void aRefusalHoldsLaterSendsAndResendsEverythingInOrderAfterABackOff() {
    router.owner = A;
    Pending p1 = send("1");
    Pending p2 = send("2");
    Pending p3 = send("3");
    router.takeDispatched();
    p2.bounce(); // A refused 2
    Pending p4 = send("4");
    assertThat(router.dispatched).as("4 waits behind the refused 2").isEmpty();
    p3.bounce();
    handled(p1); // nothing is unresolved at A any more, but A refused under this very claim: back off
    assertThat(router.dispatched).isEmpty();
    assertThat(time.scheduled()).isEqualTo(1);
    // Two refusals in a row: the second waits twice as long as the first (2 ms, then 4 ms).
    time.advance(TimeUnit.MILLISECONDS.toNanos(3));
    assertThat(router.dispatched).isEmpty();
    time.advance(TimeUnit.MILLISECONDS.toNanos(1));
    assertThat(messages(router.dispatched)).containsExactly("2", "3", "4");
    assertThat(router.dispatched.get(0).resume).as("the first resent lifts the receiver's refusal").isTrue();
    assertThat(router.dispatched.subList(1, 3)).noneMatch(p -> p.resume);
    assertThat(p4.isDone()).isFalse();
  }

  @Test
  void refusalsAtTheSameOwnerBackOffLongerEachTime() {
    router.owner = A;
    send("1");
    long[] waits = new long[4];
    for (int round = 0; round < waits.length; round++) {
      Pending p = router.takeDispatched().get(0);
      long before = time.nanoTime();
      p.bounce();
      while (router.dispatched.isEmpty()) {
        time.advance(TimeUnit.MILLISECONDS.toNanos(1));
      }
      waits[round] = TimeUnit.NANOSECONDS.toMillis(time.nanoTime() - before);
    }
    assertThat(waits).containsExactly(2, 4, 8, 16);
    handled(router.takeDispatched().get(0));
    send("2");
    Pending again = router.takeDispatched().get(0);
    long before = time.nanoTime();
    again.bounce();
    while (router.dispatched.isEmpty()) {
      time.advance(TimeUnit.MILLISECONDS.toNanos(1));
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(time.nanoTime() - before)).as("a success resets the back-off")
        .isEqualTo(2);
  }

  @Test
  void aNewerClaimOrAnotherOwnerSkipsTheBackOff() {
    router.owner = A;
    send("1").bounce();
    assertThat(router.takeDispatched()).hasSize(1);
    assertThat(router.dispatched).isEmpty();
    router.epoch = 2;
    route.kick();
    assertThat(messages(router.dispatched)).containsExactly("1");
    router.takeDispatched().get(0).bounce();
    router.owner = B;
    route.kick();
    assertThat(messages(router.dispatched)).containsExactly("1");
    assertThat(router.to).containsExactly(B);
  }

  @Test
  void aHandOffWaitsForWhatIsStillUnresolvedAtTheOldOwner() {
    router.owner = A;
    Pending p1 = send("1");
    router.owner = B;
    send("2");
    send("3");
    assertThat(messages(router.dispatched)).as("2 and 3 must not overtake 1").containsExactly("1");
    handled(p1);
    assertThat(messages(router.dispatched)).containsExactly("1", "2", "3");
    assertThat(router.to).containsExactly(A, B, B);
  }

  @Test
  void aTimedOutMessageNoLongerHoldsTheShardBack() {
    router.owner = A;
    Pending p1 = send("1");
    router.owner = B;
    send("2");
    route.timedOut(p1);
    assertThat(messages(router.dispatched)).containsExactly("1", "2");
    route.timedOut(p1); // twice: nothing more
    assertThat(router.dispatched).hasSize(2);
  }

  @Test
  void aMessageRefusedAtOnceComesBackToTheBuffer() {
    router.owner = A;
    router.refuseAtOnce = true;
    Pending p = send("1");
    assertThat(p.isDone()).isFalse();
    assertThat(router.holding).containsExactly(route);
    router.refuseAtOnce = false;
    time.advance(TimeUnit.MILLISECONDS.toNanos(2));
    assertThat(messages(router.dispatched)).containsExactly("1");
  }

  @Test
  void aFullBufferFailsTheSendAndSaysWhy() {
    ShardRoute small = route(3);
    List<Pending> sent = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Pending p = Fakes.pending(owner, time.nanoTime(), 10_000, "m" + i);
      small.send(p);
      sent.add(p);
    }
    assertThat(sent.subList(0, 3)).noneMatch(Pending::isDone);
    assertThat(sent.get(3)).isCompletedExceptionally();
    try {
      sent.get(3).get();
    } catch (ExecutionException | InterruptedException e) {
      assertThat(e.getCause()).isInstanceOf(DeliveryException.class);
      assertThat(((DeliveryException) e.getCause()).reason()).isEqualTo(DeliveryException.Reason.BUFFER_FULL);
      assertThat(e.getCause()).hasMessageContaining("buffer is full (3 messages waiting");
    }
    sent.get(0).settleExceptionally(new IllegalStateException("gone")); // a waiting one timed out
    Pending late = Fakes.pending(owner, time.nanoTime(), 10_000, "late");
    small.send(late);
    assertThat(late.isDone()).as("completed messages leave the buffer to make room").isFalse();
  }

  @Test
  void failAllFailsWhatWaits() {
    Pending p = send("1");
    route.failAll(new DeliveryException(DeliveryException.Reason.SHUT_DOWN, "closing"));
    assertThat(p).isCompletedExceptionally();
  }
}
