package io.atoll.runtime.internal.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The pacing of a repeated log line, on a virtual clock. */
class LogPacerTest {

  private static final long S = 1_000_000_000L;

  @Test
  void quietFirstThenOncePerPeriod() {
    LogPacer p = new LogPacer(Duration.ofSeconds(2), Duration.ofSeconds(10));
    long t0 = 7 * S;
    assertThat(p.due(t0)).as("a blip").isFalse();
    assertThat(p.due(t0 + S)).isFalse();
    assertThat(p.due(t0 + 2 * S)).as("held for the quiet time").isTrue();
    assertThat(p.due(t0 + 3 * S)).isFalse();
    assertThat(p.due(t0 + 12 * S - 1)).isFalse();
    assertThat(p.due(t0 + 12 * S)).as("a period later").isTrue();
  }

  @Test
  void refusesANegativeQuietTimeAndAnEmptyPeriod() {
    assertThatThrownBy(() -> new LogPacer(Duration.ofSeconds(-1), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: quiet >= 0, period > 0");
    assertThatThrownBy(() -> new LogPacer(Duration.ZERO, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * However the calls fall: no line before the quiet time, two lines a period apart at least, and a
   * line at every call that comes after the quiet time and a period or more after the last line.
   */
  @Property(tries = 500)
  void logsExactlyWhenTheQuietTimeAndAPeriodSinceTheLastLineHavePassed(
      @ForAll @Size(min = 1, max = 200) List<@LongRange(min = 1, max = 3_000_000_000L) Long> gaps,
      @ForAll @LongRange(min = 0, max = 5_000_000_000L) long quiet,
      @ForAll @LongRange(min = 1, max = 5_000_000_000L) long period) {
    LogPacer p = new LogPacer(Duration.ofNanos(quiet), Duration.ofNanos(period));
    long start = -1_000_000_000_000L; // any origin: the pacer only subtracts
    long now = start;
    List<Long> lines = new ArrayList<>();
    List<Long> calls = new ArrayList<>();
    for (long gap : gaps) {
      calls.add(now);
      if (p.due(now)) {
        lines.add(now);
      }
      now += gap;
    }
    for (long at : lines) {
      assertThat(at - start).isGreaterThanOrEqualTo(quiet);
    }
    for (int i = 1; i < lines.size(); i++) {
      assertThat(lines.get(i) - lines.get(i - 1)).isGreaterThanOrEqualTo(period);
    }
    // Every call made when the last line (or the quiet time's end) is a period or more behind logs.
    long last = Long.MIN_VALUE;
    for (long at : calls) {
      boolean due = at - start >= quiet && (last == Long.MIN_VALUE || at - last >= period);
      assertThat(lines.contains(at)).isEqualTo(due);
      if (due) {
        last = at;
      }
    }
  }
}
