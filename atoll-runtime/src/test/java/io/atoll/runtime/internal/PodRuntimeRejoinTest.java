package io.atoll.runtime.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.runtime.internal.cluster.ManagerLink;
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
  void otherFailuresAreRetriedUntilItJoins() {
    AtomicInteger calls = new AtomicInteger();
    boolean joined = Rejoin.joinAgain(() -> {
      if (calls.incrementAndGet() < 3) {
        throw new IllegalStateException("the shard manager did not answer");
      }
    }, () -> false, SELF);
    assertThat(joined).isTrue();
    assertThat(calls).hasValue(3);
  }

  @Test
  void aClosingPodStopsTrying() {
    assertThat(Rejoin.joinAgain(() -> {
      throw new AssertionError("no Register once closing");
    }, () -> true, SELF)).isFalse();
  }
}
