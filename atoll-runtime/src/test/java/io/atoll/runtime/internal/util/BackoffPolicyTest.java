package io.atoll.runtime.internal.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class BackoffPolicyTest {

  private final BackoffPolicy policy = BackoffPolicy.exponential(Duration.ofMillis(50), Duration.ofSeconds(2));

  @Test
  void startsAtTheInitialWaitAndDoublesUpToTheCap() {
    long wait = 0;
    long[] seen = new long[9];
    for (int i = 0; i < seen.length; i++) {
      wait = policy.nextNanos(wait);
      seen[i] = wait / 1_000_000;
    }
    assertThat(seen).containsExactly(50, 100, 200, 400, 800, 1600, 2000, 2000, 2000);
  }

  @Test
  void aSuccessStartsTheNextSeriesAtTheInitialWait() {
    long wait = policy.nextNanos(policy.nextNanos(policy.nextNanos(0)));
    assertThat(wait).isEqualTo(Duration.ofMillis(200).toNanos());
    assertThat(policy.nextNanos(0)).isEqualTo(Duration.ofMillis(50).toNanos());
  }

  @Test
  void theRoutesPolicyMatchesItsOldHandWrittenSeries() {
    BackoffPolicy routes = BackoffPolicy.exponential(Duration.ofMillis(2), Duration.ofMillis(500));
    long wait = 0;
    StringBuilder millis = new StringBuilder();
    for (int i = 0; i < 10; i++) {
      wait = routes.nextNanos(wait);
      millis.append(wait / 1_000_000).append(' ');
    }
    assertThat(millis.toString().trim()).isEqualTo("2 4 8 16 32 64 128 256 500 500");
  }

  @Test
  void refusesNonPositiveOrInvertedBounds() {
    assertThatThrownBy(() -> BackoffPolicy.exponential(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: > 0");
    assertThatThrownBy(() -> BackoffPolicy.exponential(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: >= initial");
  }

  @Property
  void everyWaitIsWithinTheBoundsAndNeverShrinks(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long previous) {
    long next = policy.nextNanos(previous);
    assertThat(next).isBetween(policy.initialNanos(), policy.maxNanos());
    if (previous > 0 && previous <= policy.maxNanos()) {
      assertThat(next).isGreaterThanOrEqualTo(previous);
    }
  }
}
