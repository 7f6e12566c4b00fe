package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The lease arguments every store checks, at their limits, and the errors of a lost leadership. */
class LeaseArgumentsTest {

  @Test
  void aHolderIsOneTo255CharactersOnOneLine() {
    AssignmentStore.checkLeaseArguments("m", Duration.ofSeconds(1));
    AssignmentStore.checkLeaseArguments("m".repeat(AssignmentStore.MAX_HOLDER), Duration.ofSeconds(1));
    assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments("m".repeat(AssignmentStore.MAX_HOLDER + 1),
        Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: 1..255");
    assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments("", Duration.ofSeconds(1)))
        .hasMessage("lease holder: '' (expected: 1..255 characters)");
    assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments(null, Duration.ofSeconds(1)))
        .hasMessage("lease holder: null (expected: 1..255 characters)");
    assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments("a\nb", Duration.ofSeconds(1)))
        .hasMessageContaining("line break");
    assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments("a\rb", Duration.ofSeconds(1)))
        .hasMessageContaining("line break");
    // at either end of the name too
    for (String holder : new String[] {"\nab", "\rab", "ab\n", "ab\r"}) {
      assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments(holder, Duration.ofSeconds(1)))
          .hasMessage("lease holder: contains a line break (expected: one line)");
    }
  }

  @Test
  void aLeaseLivesOneMillisecondToOneDay() {
    AssignmentStore.checkLeaseArguments("m", Duration.ofMillis(1));
    AssignmentStore.checkLeaseArguments("m", Duration.ofDays(1));
    for (Duration bad : new Duration[] {Duration.ofNanos(999_999), Duration.ZERO, Duration.ofMillis(-1),
        Duration.ofDays(1).plusNanos(1)}) {
      assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments("m", bad)).as("%s", bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessage("lease ttl: " + bad + " (expected: 1 ms..1 day)");
    }
    assertThatThrownBy(() -> AssignmentStore.checkLeaseArguments("m", null))
        .hasMessage("lease ttl: null (expected: 1 ms..1 day)");
  }

  @Test
  void aStaleTermNamesBothTerms() {
    StaleTermException e = new StaleTermException("store", 3, 5);
    assertThat(e.term()).isEqualTo(3);
    assertThat(e.currentTerm()).isEqualTo(5);
    assertThat(e.getMessage()).contains("term 3 is stale").contains("current term 5");
  }

  @Test
  void aTakenLeadershipNamesTheLeaderWhenItIsKnown() {
    AssignmentStore.Leader l = new AssignmentStore.Leader("other", 7);
    LeadershipTakenException known = new LeadershipTakenException("store", Optional.of(l));
    assertThat(known.leader()).contains(l);
    assertThat(known.getMessage()).contains("another manager leads (other, term 7)");
    LeadershipTakenException unknown = new LeadershipTakenException("store", Optional.empty());
    assertThat(unknown.leader()).isEmpty();
    assertThat(unknown.getMessage()).contains("(its lease is live)");
  }
}
