package io.atoll.runtime.internal.send;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Deadlines and the in-flight bound, on a virtual clock. */
class TimeoutsTest {

  private final Fakes.Owner owner = new Fakes.Owner();
  private long now = 5_000_000_000L;

  private static long ms(long m) {
    return TimeUnit.MILLISECONDS.toNanos(m);
  }

  @Test
  void expiresExactlyThoseAtOrPastTheirDeadlineInDeadlineOrder() {
    Timeouts t = new Timeouts(100);
    Pending a = Fakes.pending(owner, now, 100, "a");
    Pending b = Fakes.pending(owner, now + ms(10), 100, "b");
    Pending c = Fakes.pending(owner, now, 500, "c");
    assertThat(t.add(a)).isTrue();
    assertThat(t.add(b)).isTrue();
    assertThat(t.add(c)).isTrue();
    assertThat(t.expired(now + ms(100) - 1)).isEmpty();
    assertThat(t.expired(now + ms(100))).containsExactly(a);
    assertThat(t.size()).isEqualTo(2);
    assertThat(t.expired(now + ms(499))).containsExactly(b);
    assertThat(t.expired(now + ms(10_000))).containsExactly(c);
    assertThat(t.size()).isZero();
  }

  @Test
  void timeoutsAreWholeMillisecondsAndAtLeastOne() {
    Pending p = new Pending(owner, Fakes.TYPE, "e", 1, "m", false, 1_500_000, now);
    assertThat(p.timeoutNanos).isEqualTo(ms(1));
    Pending q = new Pending(owner, Fakes.TYPE, "e", 1, "m", false, 10, now);
    assertThat(q.timeoutNanos).isEqualTo(ms(1));
    assertThat(q.deadlineNanos).isEqualTo(now + ms(1));
  }

  @Test
  void boundsTheNumberInFlightAndFreesASlotOnRemove() {
    Timeouts t = new Timeouts(2);
    Pending a = Fakes.pending(owner, now, 100, "a");
    Pending b = Fakes.pending(owner, now, 100, "b");
    Pending c = Fakes.pending(owner, now, 100, "c");
    assertThat(t.add(a)).isTrue();
    assertThat(t.add(b)).isTrue();
    assertThat(t.add(c)).as("over the bound").isFalse();
    assertThat(t.size()).isEqualTo(2);
    t.remove(a);
    t.remove(a); // twice: counted once
    assertThat(t.size()).isEqualTo(1);
    assertThat(t.add(c)).isTrue();
    assertThat(t.expired(now + ms(100))).containsExactlyInAnyOrder(b, c);
  }

  @Test
  void aRemovedMessageNeverExpires() {
    Timeouts t = new Timeouts(10);
    Pending a = Fakes.pending(owner, now, 100, "a");
    Pending b = Fakes.pending(owner, now, 100, "b");
    Pending c = Fakes.pending(owner, now, 100, "c");
    t.add(a);
    t.add(b);
    t.add(c);
    t.remove(b); // from the middle of its lane
    assertThat(t.expired(now + ms(100))).containsExactly(a, c);
  }

  @Test
  void aHandledBatchLeavesOnlyWithItsSettledMessagesAndIsCountedOnce() throws Exception {
    Timeouts t = new Timeouts(10);
    Pending a = Fakes.pending(owner, now, 100, "a");
    Pending b = Fakes.pending(owner, now, 100, "b");
    Pending c = Fakes.pending(owner, now, 100, "c");
    Pending d = Fakes.pending(owner, now, 200, "d");
    Pending e = Fakes.pending(owner, now, 100, "e");
    t.add(a);
    t.add(b);
    t.add(c);
    // d and e from a thread on another stripe (stripes go by thread id): a second run of the batch.
    Thread other;
    do {
      other = Thread.ofPlatform().unstarted(() -> {
        t.add(d);
        t.add(e);
      });
    } while ((other.threadId() & 15) == (Thread.currentThread().threadId() & 15));
    other.start();
    other.join();
    assertThat(t.expired(now + ms(100) - 1)).isEmpty();
    HandledBatch batch = new HandledBatch(owner, 1);
    batch.add(a, true);
    batch.add(b, false); // an ask, or completed by a timeout first: not this batch's to remove
    batch.add(d, true);
    batch.add(c, true);
    batch.add(e, true);
    t.removeSettled(batch.head);
    assertThat(t.size()).isEqualTo(1);
    assertThat(t.expired(now + ms(1_000))).containsExactly(b);
    t.removeSettled(batch.head); // again: nothing is counted twice
    assertThat(t.size()).isZero();
    assertThat(t.add(a)).isTrue();
  }

  @Test
  void manyLanesAndThreadsAreAllSwept() throws Exception {
    Timeouts t = new Timeouts(100_000);
    List<Pending> all = java.util.Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> threads = new ArrayList<>();
    for (int th = 0; th < 8; th++) {
      int seed = th;
      threads.add(CompletableFuture.runAsync(() -> {
        for (int i = 0; i < 500; i++) {
          Pending p = Fakes.pending(owner, now, 1 + (i + seed) % 7, "m");
          assertThat(t.add(p)).isTrue();
          all.add(p);
        }
      }, r -> Thread.ofPlatform().start(r)));
    }
    CompletableFuture.allOf(threads.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
    assertThat(t.size()).isEqualTo(4000);
    assertThat(t.snapshot()).hasSize(4000);
    List<Pending> first = t.expired(now + ms(3));
    assertThat(first).allMatch(p -> p.deadlineNanos <= now + ms(3));
    List<Pending> rest = t.all();
    assertThat(first.size() + rest.size()).isEqualTo(4000);
    assertThat(t.size()).isZero();
  }
}
