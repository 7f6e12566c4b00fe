package io.atoll.bench.sidebyside;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class BenchArgsTest {

  private static final List<String> DEFAULTS = List.of("a", "b");

  @Test
  void defaultsWhenNothingIsGiven() {
    assertThat(BenchArgs.parse(new String[0], DEFAULTS)).isEqualTo(new BenchArgs(DEFAULTS, 3, 10, 5, 200_000));
  }

  @Test
  void scenariosAndOptionsInAnyOrder() {
    BenchArgs a = BenchArgs.parse(new String[] {"--runs", "1", "local-tell", "--seconds", "4", "join", "--warmup", "0",
        "--idle", "1000"}, DEFAULTS);
    assertThat(a).isEqualTo(new BenchArgs(List.of("local-tell", "join"), 1, 4, 0, 1000));
  }

  @Test
  void badOptionsSayWhatWasExpected() {
    assertThatThrownBy(() -> BenchArgs.parse(new String[] {"--runs"}, DEFAULTS))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("--runs: missing (expected: a number after it)");
    assertThatThrownBy(() -> BenchArgs.parse(new String[] {"--seconds", "ten"}, DEFAULTS))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("--seconds: 'ten' (expected: a whole number)");
    assertThatThrownBy(() -> BenchArgs.parse(new String[] {"--runs", "0"}, DEFAULTS))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("--runs: 0 (expected: 1 to 100)");
    assertThatThrownBy(() -> BenchArgs.parse(new String[] {"--fast"}, DEFAULTS))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("option: --fast");
  }

  @Test
  void sideBySideOptionsPassTheirRangesOnAndDefaultToAShortRun() {
    SideBySide.Options o = SideBySide.Options.parse(new String[0]);
    assertThat(o.pairs()).isEqualTo(3);
    assertThat(o.benchArgs(SideBySide.SCENARIOS)).startsWith(SideBySide.SCENARIOS.toArray(String[]::new))
        .containsSubsequence("--runs", "1", "--seconds", "3", "--warmup", "2", "--idle", "100000");
    assertThat(SideBySide.Options.parse(new String[] {"--pairs", "5", "--seconds", "6", "--doc", "x.md"}))
        .extracting(SideBySide.Options::pairs, SideBySide.Options::seconds).containsExactly(5, 6);
    assertThatThrownBy(() -> SideBySide.Options.parse(new String[] {"--pairs", "0"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("--pairs: 0 (expected: 1 to 20)");
    assertThatThrownBy(() -> SideBySide.Options.parse(new String[] {"--seconds", "0"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("--seconds: 0 (expected: 1 to 3600)");
    assertThatThrownBy(() -> SideBySide.Options.parse(new String[] {"--doc"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("--doc: missing (expected: a value after it)");
  }
}
