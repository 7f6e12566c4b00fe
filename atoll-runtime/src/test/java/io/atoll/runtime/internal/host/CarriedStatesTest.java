package io.atoll.runtime.internal.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.CarriedState;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The states carried to a pod in hand-offs: kept per shard and claim, taken once, bounded, dropped when stale. */
class CarriedStatesTest {

  private static Left left(String id, long revision, int bytes) {
    return new Left("counter", id, new CarriedState(revision, revision == 0 ? null : new byte[bytes]));
  }

  @Test
  void aStateIsTakenOnceAndOnlyByAnActivationUnderTheClaimItWasCarriedFor() {
    CarriedStates c = new CarriedStates();
    assertThat(c.keep(3, 10, List.of(left("a", 2, 5), left("b", 0, 0)), 0)).isEqualTo(2);
    assertThat(c.take(3, 9, "counter", "a")).isNull();
    assertThat(c.take(3, 11, "counter", "a")).isNull();
    assertThat(c.take(4, 10, "counter", "a")).isNull();
    assertThat(c.take(3, 10, "other", "a")).isNull();
    assertThat(c.take(3, 10, "counter", "a").revision()).isEqualTo(2);
    assertThat(c.take(3, 10, "counter", "a")).isNull();
    assertThat(c.take(3, 10, "counter", "b")).isEqualTo(new CarriedState(0, null));
    assertThat(c.size()).isZero();
  }

  @Test
  void aNewerHandOffOfAShardReplacesWhatAnOlderOneCarriedAndAnOlderOneIsRefused() {
    CarriedStates c = new CarriedStates();
    c.keep(3, 10, List.of(left("a", 2, 5), left("b", 4, 5)), 0);
    assertThat(c.keep(3, 12, List.of(left("a", 3, 5)), 0)).isEqualTo(1);
    assertThat(c.keep(3, 11, List.of(left("b", 9, 5)), 0)).isZero();
    assertThat(c.take(3, 10, "counter", "b")).isNull();
    assertThat(c.take(3, 12, "counter", "a").revision()).isEqualTo(3);
  }

  @Test
  void statesBeyondTheBoundAreNotKeptAndTakingFreesRoom() {
    CarriedStates c = new CarriedStates();
    int big = (int) (CarriedStates.MAX_BYTES / 2);
    assertThat(c.keep(1, 10, List.of(left("a", 1, big), left("b", 1, big), left("c", 1, 1)), 0)).isEqualTo(2);
    assertThat(c.keep(2, 10, List.of(left("d", 1, 1)), 0)).isZero();
    c.take(1, 10, "counter", "a");
    assertThat(c.keep(2, 10, List.of(left("d", 1, 1)), 0)).isEqualTo(1);
  }

  @Test
  void statesNoActivationTookAreDroppedAfterTheirTime() {
    CarriedStates c = new CarriedStates();
    c.keep(1, 10, List.of(left("a", 1, 10)), 0);
    c.keep(2, 10, List.of(left("b", 1, 10)), CarriedStates.KEEP_NANOS / 2);
    c.keep(3, 10, List.of(), CarriedStates.KEEP_NANOS); // any keep looks at the clock
    assertThat(c.take(1, 10, "counter", "a")).isNull();
    assertThat(c.take(2, 10, "counter", "b")).isNotNull();
  }
}
