package io.atoll.bench.sidebyside;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SideBySideTableTest {

  private static final Figure TELL = new Figure("local tell", "local-tell", "msg/s", true, 3, "/s");
  private static final Figure HEAP = new Figure("idle heap", "idle-heap", "bytes/entity", false, 8, "B");

  private static SideBySideTable.Pair pair(double atollTell, double pekkoTell, double atollHeap, double pekkoHeap) {
    return new SideBySideTable.Pair(
        Map.of("local-tell msg/s", atollTell, "idle-heap bytes/entity", atollHeap, "remote-ask-1 p50_us", 60.0),
        Map.of("local-tell msg/s", pekkoTell, "idle-heap bytes/entity", pekkoHeap, "remote-ask-1 p50_us", 300.0),
        Map.of("floor-tcp p50_us", 20.0));
  }

  @Test
  void advantageIsAtollOverPekkoForRatesAndPekkoOverAtollForCosts() {
    assertThat(TELL.advantage(3_000_000, 1_000_000)).isEqualTo(3.0);
    assertThat(HEAP.advantage(200, 1600)).isEqualTo(8.0);
    assertThatThrownBy(() -> TELL.advantage(0, 1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: both > 0");
  }

  @Test
  void tableHasMediansSpreadsRatiosPerPairAndTheVerdict() {
    List<SideBySideTable.Pair> pairs = List.of(pair(2_000_000, 1_000_000, 200, 1600),
        pair(4_000_000, 1_000_000, 190, 1500), pair(3_000_000, 2_000_000, 210, 1700));
    String t = SideBySideTable.table(List.of(TELL, HEAP), pairs);
    assertThat(t).contains("| local tell | ≥ 3.00× | 3,000,000 /s (2,000,000–4,000,000) | 1,000,000 /s "
        + "(1,000,000–2,000,000) | 2.00×, 4.00×, 1.50× | **2.00×** | **not met** |");
    // 1600/200 = 8, 1500/190 = 7.89, 1700/210 = 8.10: median 8.00, met
    assertThat(t).contains("| idle heap | ≥ 8.00× | 200 B (190–210) | 1,600 B (1,500–1,700) | 8.00×, 7.89×, 8.10× "
        + "| **8.00×** | met |");
  }

  @Test
  void aVariantOnlyAtollRunsIsComparedWithPekkosNamedFigure() {
    Figure own = new Figure("local tell, own threads", "local-tell-own-threads", "local-tell", "msg/s", true, 0, "/s");
    SideBySideTable.Pair p = new SideBySideTable.Pair(Map.of("local-tell-own-threads msg/s", 1_500_000.0),
        Map.of("local-tell msg/s", 1_000_000.0), Map.of());
    assertThat(SideBySideTable.table(List.of(own), List.of(p)))
        .contains("| local tell, own threads | — | 1,500,000 /s (1,500,000–1,500,000) | 1,000,000 /s "
            + "(1,000,000–1,000,000) | 1.50× | **1.50×** |  |");
    // Every figure Atoll's table names is one of the scenarios each side runs.
    for (Figure f : SideBySide.FIGURES) {
      assertThat(SideBySide.ATOLL_SCENARIOS).as(f.label()).contains(f.scenario());
      assertThat(SideBySide.SCENARIOS).as(f.label()).contains(f.pekkoScenario());
    }
  }

  @Test
  void floorRowIsEachSidesMultipleOfTheFloorOfItsPair() {
    String row = SideBySideTable.floorRow("remote p50 / tcp", "remote-ask-1 p50_us", "floor-tcp p50_us", 3,
        List.of(pair(1, 1, 1, 1)));
    assertThat(row).isEqualTo("| remote p50 / tcp | ≤ 3.00× the floor | 3.00 × floor (3.00–3.00) "
        + "| 15.0 × floor (15.0–15.0) | | | met |\n");
  }

  @Test
  void aMissingFigureNamesTheSideAndThePair() {
    SideBySideTable.Pair broken = new SideBySideTable.Pair(Map.of(), Map.of("local-tell msg/s", 1.0), Map.of());
    assertThatThrownBy(() -> SideBySideTable.table(List.of(TELL), List.of(broken)))
        .isInstanceOf(NullPointerException.class).hasMessage("ATOLL has no figure 'local-tell msg/s' in pair 1");
  }

  @Test
  void rewriteReplacesOnlyTheTextBetweenTheMarkers() {
    String doc = "# Bench\nbefore\n" + SideBySideTable.BEGIN + "\nold table\n" + SideBySideTable.END + "\nafter\n";
    String out = SideBySideTable.rewrite(doc, "new table");
    assertThat(out).isEqualTo("# Bench\nbefore\n" + SideBySideTable.BEGIN + "\nnew table\n" + SideBySideTable.END
        + "\nafter\n");
    assertThat(SideBySideTable.rewrite(out, "new table")).isEqualTo(out);
  }

  @Test
  void rewriteRefusesMissingDoubledOrReversedMarkers() {
    assertThatThrownBy(() -> SideBySideTable.rewrite("no markers", "x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: each once, begin first");
    String twice = SideBySideTable.BEGIN + SideBySideTable.END + SideBySideTable.BEGIN + SideBySideTable.END;
    assertThatThrownBy(() -> SideBySideTable.rewrite(twice, "x")).isInstanceOf(IllegalArgumentException.class);
    String reversed = SideBySideTable.END + "\n" + SideBySideTable.BEGIN;
    assertThatThrownBy(() -> SideBySideTable.rewrite(reversed, "x")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void figureRefusesBlankNamesAndNegativeTargets() {
    assertThatThrownBy(() -> new Figure(" ", "s", "k", true, 0, "")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Figure("l", "s", "k", true, -1, "")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("target: -1.0 (expected: >= 0)");
  }
}
