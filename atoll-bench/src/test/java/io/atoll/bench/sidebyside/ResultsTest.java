package io.atoll.bench.sidebyside;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultsTest {

  @Test
  void resultLinesRoundTripWithSpacesInKeysTurnedIntoUnderscores() {
    Map<String, Double> m = new LinkedHashMap<>();
    m.put("p50 us", 12.5);
    m.put("msg/s", 1_234_567.0);
    List<String> lines = Results.lines("local-ask-1", m);
    assertThat(lines).containsExactly("RESULT local-ask-1 p50_us=12.500", "RESULT local-ask-1 msg/s=1234567.000");
    assertThat(Results.parse(lines.get(0))).contains(new Results.Line("local-ask-1", "p50_us", 12.5));
  }

  @Test
  void otherOutputIsNotAResult() {
    assertThat(Results.parse("  local-tell run 1: msg/s 1.0")).isEmpty();
    assertThat(Results.parse("")).isEmpty();
  }

  @Test
  void aBrokenResultLineIsRefusedWithWhatWasExpected() {
    assertThatThrownBy(() -> Results.parse("RESULT local-tell"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: RESULT <scenario> <key>=<value>");
    assertThatThrownBy(() -> Results.parse("RESULT local-tell msg/s=fast"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a number");
    assertThatThrownBy(() -> Results.parse("RESULT local-tell =3"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void medianOfOddAndEvenCounts() {
    assertThat(Results.median(3, 1, 2)).isEqualTo(2);
    assertThat(Results.median(4, 1, 3, 2)).isEqualTo(2.5);
    assertThat(Results.median(7)).isEqualTo(7);
    assertThatThrownBy(Results::median).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void medianPerKeyOfRuns() {
    Map<String, Double> m = Results.median(List.of(Map.of("a", 1.0, "b", 30.0), Map.of("a", 3.0, "b", 10.0),
        Map.of("a", 2.0, "b", 20.0)));
    assertThat(m).containsEntry("a", 2.0).containsEntry("b", 20.0);
  }

  @Test
  void percentilesInMicroseconds() {
    long[] samples = new long[100];
    for (int i = 0; i < 100; i++) {
      samples[i] = (100 - i) * 1000L; // 1..100 us, unsorted
    }
    Map<String, Double> p = Results.percentiles(samples);
    assertThat(p).containsEntry("p50 us", 51.0).containsEntry("p99 us", 100.0).containsEntry("samples", 100.0);
    assertThatThrownBy(() -> Results.percentiles(new long[0])).isInstanceOf(IllegalArgumentException.class);
  }
}
