package io.atoll.runtime.internal.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.spi.StoredState;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The states carried to a pod in hand-offs: kept per shard and claim, taken once, bounded, dropped when stale. */
class CarriedStatesTest {

  private static Left left(String id, long revision, int bytes) {
    return new Left("counter", id, new StoredState(revision, revision == 0 ? null : new byte[bytes]));
  }

  @Test
  void aStateIsTakenOnceAndOnlyByAnActivationUnderTheClaimItWasCarriedFor() {
    CarriedStates c = new CarriedStates();
    assertThat(c.keep(3, 10, List.of(left("a", 2, 5), left("b", 0, 0)), 0)).isEqualTo(2);
    assertThat(c.take(3, 9, "counter", "a", 0)).isNull();
    assertThat(c.take(3, 11, "counter", "a", 0)).isNull();
    assertThat(c.take(4, 10, "counter", "a", 0)).isNull();
    assertThat(c.take(3, 10, "other", "a", 0)).isNull();
    assertThat(c.take(3, 10, "counter", "a", 0).revision()).isEqualTo(2);
    assertThat(c.take(3, 10, "counter", "a", 0)).isNull();
    assertThat(c.take(3, 10, "counter", "b", 0)).isEqualTo(new StoredState(0, null));
    assertThat(c.size()).isZero();
  }

  @Test
  void aNewerHandOffOfAShardReplacesWhatAnOlderOneCarriedAndAnOlderOneIsRefused() {
    CarriedStates c = new CarriedStates();
    c.keep(3, 10, List.of(left("a", 2, 5), left("b", 4, 5)), 0);
    assertThat(c.keep(3, 12, List.of(left("a", 3, 5)), 0)).isEqualTo(1);
    assertThat(c.keep(3, 11, List.of(left("b", 9, 5)), 0)).isZero();
    assertThat(c.take(3, 10, "counter", "b", 0)).isNull();
    assertThat(c.take(3, 12, "counter", "a", 0).revision()).isEqualTo(3);
  }

  @Test
  void statesBeyondTheBoundAreNotKeptAndTakingFreesRoom() {
    CarriedStates c = new CarriedStates();
    // Each of a, b, c, d costs half the bound with its overhead and strings counted.
    int big = (int) (CarriedStates.MAX_BYTES / 2 - CarriedStates.cost("counter", "a", new StoredState(1, new byte[0])));
    assertThat(c.keep(1, 10, List.of(left("a", 1, big), left("b", 1, big), left("c", 1, 0)), 0)).isEqualTo(2);
    assertThat(c.bytes()).isEqualTo(CarriedStates.MAX_BYTES);
    assertThat(c.keep(2, 10, List.of(left("d", 0, 0)), 0)).as("even a state of no bytes costs room").isZero();
    c.take(1, 10, "counter", "a", 0);
    assertThat(c.keep(2, 10, List.of(left("d", 1, big)), 0)).isEqualTo(1);
    assertThat(c.size()).isEqualTo(2);
  }

  @Test
  void statesNoActivationTookAreDroppedAfterTheirTime() {
    CarriedStates c = new CarriedStates();
    c.keep(1, 10, List.of(left("a", 1, 10)), 0);
    c.keep(2, 10, List.of(left("b", 1, 10)), CarriedStates.KEEP_NANOS / 2);
    c.keep(3, 10, List.of(), CarriedStates.KEEP_NANOS); // any keep looks at the clock
    assertThat(c.take(1, 10, "counter", "a", CarriedStates.KEEP_NANOS)).isNull();
    assertThat(c.take(2, 10, "counter", "b", CarriedStates.KEEP_NANOS)).isNotNull();
    c.keep(4, 10, List.of(left("e", 1, 10)), CarriedStates.KEEP_NANOS);
    assertThat(c.take(4, 10, "counter", "e", 2 * CarriedStates.KEEP_NANOS)).as("taking looks at the clock").isNull();
    c.keep(5, 10, List.of(left("f", 1, 10)), 0);
    c.expire(CarriedStates.KEEP_NANOS);
    assertThat(c.size()).isZero();
    assertThat(c.bytes()).isZero();
  }
}
