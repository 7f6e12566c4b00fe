package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.AssignmentStore;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The verdict on a state read back after a failed save, as plain values. */
class FailedSavesTest {

  static final long TERM = 7;
  final FailedSaves saves = new FailedSaves();

  /** A state of {@code term}; {@code n} tells states of one term apart. */
  static byte[] state(long term, int n) {
    return new ManagerState(term, ClusterConfig.empty(4), Duration.ofSeconds(n), Duration.ZERO, PrunedPods.NONE)
        .encode();
  }

  static Optional<AssignmentStore.Stored> stored(long version, byte[] data) {
    return Optional.of(new AssignmentStore.Stored(version, TERM, data));
  }

  @Test
  void theVersionLastSavedIsUnchanged() {
    assertThat(saves.judge(stored(5, state(TERM, 1)), 5, TERM)).isInstanceOf(FailedSaves.Unchanged.class);
  }

  @Test
  void aStateOneOfThisTermsFailedSavesWroteIsOwn() {
    byte[] data = state(TERM, 2);
    saves.failed(state(TERM, 3));
    saves.failed(data);
    FailedSaves.Verdict v = saves.judge(stored(6, data), 5, TERM);
    assertThat(v).isInstanceOf(FailedSaves.Own.class);
    assertThat(((FailedSaves.Own) v).version()).isEqualTo(6);
    assertThat(((FailedSaves.Own) v).state()).isEqualTo(ManagerState.decode(data));
  }

  @Test
  void aStateOfThisTermThatNoFailedSaveWroteIsForeign() {
    saves.failed(state(TERM, 2));
    FailedSaves.Verdict v = saves.judge(stored(6, state(TERM, 3)), 5, TERM);
    assertThat(v).isInstanceOf(FailedSaves.Foreign.class);
    assertThat(((FailedSaves.Foreign) v).why()).startsWith("steps down: the store holds version 6 of term 7");
    assertThat(((FailedSaves.Foreign) v).version()).isEqualTo(6);
  }

  @Test
  void aSettledSaveForgetsTheFailedOnes() {
    byte[] data = state(TERM, 2);
    saves.failed(data);
    saves.settled();
    assertThat(saves.judge(stored(6, data), 5, TERM)).isInstanceOf(FailedSaves.Foreign.class);
  }

  @Test
  void aNewerTermDeposes() {
    FailedSaves.Verdict v = saves.judge(stored(6, state(TERM + 1, 1)), 5, TERM);
    assertThat(((FailedSaves.Foreign) v).why()).isEqualTo("is deposed: the store holds term 8");
  }

  @Test
  void aLowerVersionOrALostStateIsForeignEvenIfThisTermWroteIt() {
    byte[] data = state(TERM, 2);
    saves.failed(data);
    assertThat(saves.judge(stored(4, data), 5, TERM)).isInstanceOf(FailedSaves.Foreign.class);
    FailedSaves.Verdict lost = saves.judge(Optional.empty(), 5, TERM);
    assertThat(((FailedSaves.Foreign) lost).version()).isZero();
    assertThat(((FailedSaves.Foreign) lost).why()).contains("lost its state");
  }

  @Test
  void onlyTheFirstThousandTwentyFourFailedSavesAreKept() {
    for (int i = 0; i < FailedSaves.MAX_UNSETTLED; i++) {
      saves.failed(state(TERM, 10 + i));
    }
    byte[] late = state(TERM, 5000);
    saves.failed(late);
    assertThat(saves.judge(stored(6, state(TERM, 10)), 5, TERM)).isInstanceOf(FailedSaves.Own.class);
    assertThat(saves.judge(stored(6, late), 5, TERM)).isInstanceOf(FailedSaves.Foreign.class);
  }
}
