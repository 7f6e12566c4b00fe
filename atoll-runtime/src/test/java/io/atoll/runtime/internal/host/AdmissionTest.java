package io.atoll.runtime.internal.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.OverloadCause;
import java.util.ArrayDeque;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The pod's admission on a virtual clock: its estimates, and a simulation of one entity's mailbox
 * under any arrivals, checking that what it admits is handled within its deadline and within the
 * queue-time bound, and that it refuses nothing an idle entity can handle in time.
 */
class AdmissionTest {

  static final long MS = 1_000_000L;

  @Test
  void nothingIsRefusedBeforeAnythingWasMeasured() {
    Admission a = new Admission(1, 100 * MS, 0);
    assertThat(a.admit(0, 5_000, 0, 10 * MS)).isNull();
    assertThat(a.lateToBegin(0, 10 * MS - 1, 10 * MS)).as("nothing is late before its deadline").isFalse();
    assertThat(a.lateToBegin(0, 10 * MS, 10 * MS)).isTrue();
  }

  @Test
  void aMessageBehindALongQueueIsRefusedForQueueTimeWithTheWaitAsItsHint() {
    Admission a = new Admission(2, 100 * MS, 0);
    a.handled(0, 10 * MS, 0);
    Admission.Refusal r = a.admit(0, 11, 0, 10_000 * MS);
    assertThat(r).isNotNull();
    assertThat(r.cause()).isEqualTo(OverloadCause.QUEUE_TIME);
    assertThat(r.waitNanos()).isEqualTo(110 * MS);
    assertThat(a.admit(0, 9, 0, 10_000 * MS)).as("90 ms of queue: under the bound").isNull();
    assertThat(a.admit(1, 11, 0, 10_000 * MS)).as("another type's handlers were not measured").isNull();
  }

  @Test
  void aMessageThatWouldMissItsDeadlineIsRefusedOnArrivalEvenWithoutATimeBound() {
    Admission a = new Admission(1, 0, 0);
    a.handled(0, 40 * MS, 0);
    Admission.Refusal r = a.admit(0, 2, 0, 100 * MS); // 80 ms of queue, 40 of its own: past 100 ms
    assertThat(r).isNotNull();
    assertThat(r.cause()).isEqualTo(OverloadCause.DEADLINE);
    assertThat(r.waitNanos()).isEqualTo(120 * MS);
    assertThat(a.admit(0, 1, 0, 100 * MS)).as("40 + 40 + a 10 ms margin fit in 100 ms").isNull();
    assertThat(a.admit(0, 10_000, 0, 1_000_000 * MS)).as("no time bound: a long deadline takes a long queue").isNull();
  }

  @Test
  void whenItsTurnComesAMessageWithTooLittleOfItsDeadlineLeftIsLate() {
    Admission a = new Admission(1, 0, 0);
    a.handled(0, 30 * MS, 9_000 * MS);
    // A 10 s deadline: the margin is 100 ms (a tenth of what is left, capped) until 1 s is left.
    assertThat(a.lateToBegin(0, 9_000 * MS, 10_000 * MS)).as("1 s left: 30 + 100 fit").isFalse();
    assertThat(a.lateToBegin(0, 9_900 * MS, 10_000 * MS)).as("100 ms left: 30 + 10 fit").isFalse();
    assertThat(a.lateToBegin(0, 9_960 * MS, 10_000 * MS)).as("40 ms left: 30 + 4 fit").isFalse();
    assertThat(a.lateToBegin(0, 9_970 * MS, 10_000 * MS)).as("30 ms left: 30 + 3 do not").isTrue();
  }

  @Test
  void theHandlerTimeIsAMovingAverage() {
    Admission a = new Admission(1, 0, 0);
    a.handled(0, 80 * MS, 0);
    assertThat(a.handlerNanos(0, 0)).isEqualTo(80 * MS);
    a.handled(0, 16 * MS, 0);
    assertThat(a.handlerNanos(0, 0)).isEqualTo(72 * MS); // 80 + (16 - 80) / 8
    a.handled(0, 0, 0);
    assertThat(a.handlerNanos(0, 0)).as("a zero counts as 1 ns: measured, never unknown again").isPositive();
  }

  @Test
  void theEstimateOfATypeWhoseHandlersAllStalledFadesSoItIsNotRefusedForGood() {
    long s = 1_000 * MS;
    Admission a = new Admission(1, 0, 0);
    a.handled(0, 6 * s, 0); // its first handler waited 6 s on a lock: the average starts there
    assertThat(a.admit(0, 0, 0, 5 * s)).as("6 s of handler cannot fit in a 5 s deadline").isNotNull();
    assertThat(a.handlerNanos(0, Admission.HALF_LIFE_NANOS - 1)).isEqualTo(6 * s);
    assertThat(a.handlerNanos(0, 2 * Admission.HALF_LIFE_NANOS)).as("halved per quiet second").isEqualTo(1_500 * MS);
    assertThat(a.admit(0, 0, 2 * Admission.HALF_LIFE_NANOS, 2 * Admission.HALF_LIFE_NANOS + 5 * s))
        .as("two quiet seconds later a message is let through to be timed").isNull();
    a.handled(0, 10 * MS, 3 * s);
    assertThat(a.handlerNanos(0, 3 * s)).as("the next sample averages with what was left")
        .isBetween(600 * MS, 700 * MS);
  }

  @Test
  void theStandingDelayIsTheLeastWaitOfTheLastIntervalAndLapsesWhenNothingBegins() {
    long i = Admission.INTERVAL_NANOS;
    Admission a = new Admission(1, 0, 0);
    a.began(30 * MS, 10 * MS);
    a.began(20 * MS, 50 * MS);
    a.began(40 * MS, 90 * MS);
    assertThat(a.standing(95 * MS)).as("the first interval is not over").isZero();
    a.began(50 * MS, i + 1); // a new interval: the last one's least wait stands
    assertThat(a.standing(i + 2)).isEqualTo(20 * MS);
    a.began(1 * MS, i + 10 * MS); // a message that barely waited: the queue emptied
    a.began(60 * MS, 2 * i + 2);
    assertThat(a.standing(2 * i + 3)).isEqualTo(1 * MS);
    assertThat(a.standing(4 * i + 3)).as("two intervals with no message begun say nothing").isZero();
    a.began(70 * MS, 5 * i);
    assertThat(a.standing(5 * i + 1)).as("after a quiet spell the old least wait is stale").isZero();
  }

  /**
   * One entity, handlers of a fixed time, arrivals at any gaps: the mailbox FIFO, the admission
   * consulted on arrival and as each message's turn comes, as the pod does. Every message is either
   * refused (on arrival or at its turn, before its deadline) or handled by its deadline; none waits
   * longer than the bound; and a message arriving at an idle entity, with time for its handler, is
   * never refused.
   */
  @Property(tries = 400)
  void admittedMessagesAreHandledWithinTheirDeadlineAndTheBound(
      @ForAll @IntRange(min = 1, max = 50) int handlerMs,
      @ForAll @IntRange(min = 20, max = 2_000) int deadlineMs,
      @ForAll @IntRange(min = 0, max = 500) int maxQueueMs,
      @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 60) Integer> gapsMs) {
    long handler = handlerMs * MS;
    long maxQueue = maxQueueMs * MS;
    Admission a = new Admission(1, maxQueue, 0);
    record Msg(long arrived, long deadline, boolean measured, boolean idle) {}
    ArrayDeque<Msg> mailbox = new ArrayDeque<>();
    boolean running = false; // a handler runs until busyUntil
    long busyUntil = 0;
    long now = 0;
    int handled = 0;
    for (int gap : gapsMs) {
      now += gap * MS;
      // What the entity got to before this arrival: handlers return, the next message begins.
      for (;;) {
        if (running && busyUntil <= now) {
          a.handled(0, handler, busyUntil);
          running = false;
          handled++;
        }
        if (running || mailbox.isEmpty()) {
          break;
        }
        Msg m = mailbox.poll();
        long begin = Math.max(busyUntil, m.arrived);
        if (m.idle) {
          a.began(begin - m.arrived, begin); // only a message that found its entity idle measures the pod
        }
        if (a.lateToBegin(0, begin, m.deadline)) {
          assertThat(m.measured).as("refused at its turn only if admitted before any handler was timed").isFalse();
          continue; // refused at its turn, before its deadline: nothing handled
        }
        assertThat(begin).as("no message begins after its deadline").isLessThan(m.deadline);
        busyUntil = begin + handler;
        running = true;
        if (m.measured) {
          if (maxQueue > 0) {
            assertThat(begin - m.arrived).as("an admitted message waits at most the bound").isLessThanOrEqualTo(maxQueue);
          }
          assertThat(busyUntil).as("handled by its deadline").isLessThan(m.deadline);
        }
      }
      int ahead = mailbox.size() + (running ? 1 : 0);
      long deadline = now + deadlineMs * MS;
      boolean measured = a.handlerNanos(0, now) == handler; // timed, and not faded by a quiet spell
      Admission.Refusal r = a.admit(0, ahead, now, deadline);
      if (ahead == 0 && a.standing(now) == 0 && handler + Admission.margin(deadline - now) < deadline - now) {
        assertThat(r).as("an idle entity with time for its handler takes the message").isNull();
      }
      if (r == null) {
        mailbox.add(new Msg(now, deadline, measured, ahead == 0));
      }
    }
    assertThat(handled + mailbox.size()).as("something was admitted").isPositive();
  }
}
