package io.atoll.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class PacerTest {

  private static final long MS = 1_000_000L;

  /** Sends the pacer allows from {@code from} for {@code millis}, asking every 100 µs. */
  private static int sends(Pacer p, long from, long millis) {
    int n = 0;
    for (long t = from; t < from + millis * MS; t += MS / 10) {
      if (p.trySend(t)) {
        n++;
      }
    }
    return n;
  }

  @Test
  void withoutRefusalsItSendsAtTheTargetRate() {
    Pacer p = new Pacer(1000, 0);
    assertThat(sends(p, 0, 1000)).isBetween(990, 1010);
    assertThat(p.rate()).isEqualTo(1000);
  }

  @Test
  void aBurstOfRefusalsCutsTheRateOnceThenItComesBackStepByStep() {
    Pacer p = new Pacer(1000, 0);
    sends(p, 0, 1000);
    for (long t = 1000 * MS; t < 1100 * MS; t += MS) {
      p.overloaded(t); // a hundred refusals within 100 ms: one cut
    }
    assertThat(p.rate()).isEqualTo(700);
    // 0.9 s at 700/s, plus the 100 ms of credit saved while nobody sent.
    assertThat(sends(p, 1100 * MS, 900)).isBetween(620, 705);
    p.overloaded(1900 * MS);
    assertThat(p.rate()).as("within a second of the last cut: no second cut").isEqualTo(700);
    p.overloaded(2300 * MS);
    assertThat(p.rate()).isEqualTo(490);
    // Back by 10 % of the target per quiet second: 490 -> 1000 in 6 seconds, never above.
    sends(p, 2300 * MS, 3000);
    assertThat(p.rate()).isBetween(650, 850);
    sends(p, 5300 * MS, 8000);
    assertThat(p.rate()).isEqualTo(1000);
  }

  @Test
  void refusalsNeverTakeItBelowOnePercentOfTheTarget() {
    Pacer p = new Pacer(5000, 0);
    for (int i = 0; i < 100; i++) {
      p.overloaded(i * Pacer.CUT_SPACING_NANOS);
    }
    assertThat(p.rate()).isEqualTo(50);
    // Half a second (before the first quiet second gives some back) at 50/s, plus 100 ms of credit.
    assertThat(sends(p, 99 * Pacer.CUT_SPACING_NANOS, 500)).isBetween(24, 31);
  }

  @Test
  void aTargetBelowOneIsRefused() {
    assertThatThrownBy(() -> new Pacer(0, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("target rate 0");
  }

  @Property(tries = 200)
  void theRateStaysBetweenItsFloorAndTargetAndSendsNeverOutrunIt(@ForAll @IntRange(min = 1, max = 20_000) int target,
      @ForAll @Size(max = 40) java.util.List<@IntRange(min = 0, max = 3000) Integer> refusalGapsMillis) {
    Pacer p = new Pacer(target, 0);
    long t = 0;
    int sent = 0;
    for (int gap : refusalGapsMillis) {
      long until = t + gap * MS;
      for (; t < until; t += MS / 2) {
        if (p.trySend(t)) {
          sent++;
        }
        assertThat(p.rate()).isBetween((int) Math.floor(Math.max(1, target / 100.0)), target);
      }
      p.overloaded(t);
    }
    // Never more than the target over the whole run, plus the saved-up credit of 100 ms (or one send).
    assertThat((double) sent).isLessThanOrEqualTo(target * (t / 1e9) + Math.max(1, target / 10.0) + 1);
  }
}
