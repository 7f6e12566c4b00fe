package io.atoll.runtime.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.runtime.internal.cluster.ManagerLink;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A pod declared gone joins again as a new incarnation: when it retries, and when it stops trying. */
class PodRuntimeRejoinTest {

  static final PodId SELF = new PodId(new PodAddress("127.0.0.1", 7001), 1);

  @Test
  void aRefusalOfItsEntityTypesEndsTheRejoinAtTheFirstAnswer() {
    AtomicInteger calls = new AtomicInteger();
    boolean joined = Rejoin.joinAgain(() -> {
      calls.incrementAndGet();
      throw new ManagerLink.TypesRefused("pod refused: entity type declaration refused: 'job'", null);
    }, () -> calls.get() >= 5, SELF); // the bound only ends a loop that would otherwise spin forever
    assertThat(joined).isFalse();
    assertThat(calls).as("one Register, then it stays out").hasValue(1);
  }

  @Test
  void otherFailuresAreRetriedUntilItJoinsAfterPausesThatDoubleUpToFiveSeconds() {
    AtomicInteger calls = new AtomicInteger();
    List<Long> pauses = new ArrayList<>();
    boolean joined = Rejoin.joinAgain(() -> {
      if (calls.incrementAndGet() < 10) {
        throw new IllegalStateException("the shard manager did not answer");
      }
    }, () -> false, SELF, pauses::add); // a record of the pauses: no time passes
    assertThat(joined).isTrue();
    assertThat(calls).hasValue(10);
    assertThat(pauses).extracting(TimeUnit.NANOSECONDS::toMillis)
        .containsExactly(100L, 200L, 400L, 800L, 1600L, 3200L, 5000L, 5000L, 5000L);
  }

  @Test
  void aPodThatBeginsClosingDuringAPauseRegistersNoMore() {
    AtomicInteger calls = new AtomicInteger();
    AtomicBoolean closing = new AtomicBoolean();
    assertThat(Rejoin.joinAgain(() -> {
      calls.incrementAndGet();
      throw new IllegalStateException("the shard manager did not answer");
    }, closing::get, SELF, pause -> closing.set(true))).isFalse();
    assertThat(calls).hasValue(1);
  }

  @Test
  void aClosingPodStopsTrying() {
    assertThat(Rejoin.joinAgain(() -> {
      throw new AssertionError("no Register once closing");
    }, () -> true, SELF)).isFalse();
  }

  @Test
  void oneRejoinRunsAtATimeAndTheNextMayBeginWhenItJoined() {
    Rejoin gate = new Rejoin();
    assertThat(gate.begin()).isTrue();
    assertThat(gate.begin()).as("a renewal's 'unknown pod' while the rejoin waits starts no second one").isFalse();
    AtomicInteger refused = new AtomicInteger();
    assertThat(gate.run(() -> { }, () -> false, SELF, refused::incrementAndGet)).isTrue();
    assertThat(refused).hasValue(0);
    assertThat(gate.begin()).as("declared gone again later: a new rejoin").isTrue();
  }

  @Test
  void aRefusalOfItsEntityTypesShutsTheGateForGoodAndStopsTheRenewals() {
    Rejoin gate = new Rejoin();
    assertThat(gate.begin()).isTrue();
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger registers = new AtomicInteger();
    assertThat(gate.run(() -> {
      registers.incrementAndGet();
      throw new ManagerLink.TypesRefused("pod refused: entity type declaration refused: 'job'", null);
    }, () -> false, SELF, refused::incrementAndGet)).isFalse();
    assertThat(refused).as("the renewals stopped once").hasValue(1);
    assertThat(gate.outForGood()).isTrue();
    for (int i = 0; i < 3; i++) {
      assertThat(gate.begin()).as("no rejoin after a refusal for good, however often it is asked").isFalse();
    }
    assertThat(registers).hasValue(1);
  }

  @Test
  void aRejoinEndedByClosingIsNoRefusalAndACancelledBeginOpensTheGate() {
    Rejoin gate = new Rejoin();
    assertThat(gate.begin()).isTrue();
    AtomicInteger refused = new AtomicInteger();
    assertThat(gate.run(() -> {
      throw new AssertionError("no Register once closing");
    }, () -> true, SELF, refused::incrementAndGet)).isFalse();
    assertThat(refused).hasValue(0);
    assertThat(gate.outForGood()).isFalse();
    assertThat(gate.begin()).isTrue();
    gate.cancel();
    assertThat(gate.begin()).isTrue();
  }
}
