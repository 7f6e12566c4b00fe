package io.atoll.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.bench.sidebyside.Results;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The scale scenarios of {@link ClusterBench} run end to end at a tiny size, over real pod JVMs
 * and gRPC on loopback, and report well-formed figures. Speed is not checked: figures are for
 * docs/benchmarks.md, never for tests.
 */
class ScaleScenariosTest {

  private static final Loads SHORT = new Loads(0, 1);

  /**
   * 50,000 counters, not fewer: the heap growth must stand well above the collector's noise (a few
   * hundred KB between two reads after {@code System.gc()}), or the per-entity figure can come out
   * negative. At 1,000 counters it once read -110 B per entity.
   */
  @Test
  void idleMillionShapeAtFiftyThousandCountersReportsHeapRateAndNoFailure() throws Exception {
    Map<String, Double> m;
    try (BenchCluster c = new BenchCluster()) {
      m = new ClusterBench(SHORT, c).idleHeap(50_000);
    }
    assertWellFormed("idle-million", m,
        List.of("bytes/entity", "activations/s", "used_heap_MiB", "max_heap_MiB", "failed"));
    assertThat(m.get("failed")).isZero();
    assertThat(m.get("bytes/entity")).isPositive();
    assertThat(m.get("activations/s")).isPositive();
    assertThat(m.get("used heap MiB")).isPositive().isLessThanOrEqualTo(m.get("max heap MiB"));
  }

  @Test
  void joinLargeShapeWithThirtyShardsBalancesAndCountsEveryMessage() throws Exception {
    Map<String, Double> m;
    try (BenchCluster c = new BenchCluster()) {
      m = new ClusterBench(SHORT, c).join(30, 1000, "256m");
      assertThat(c.manager().config().ownedCounts().values()).containsOnly(10);
    }
    assertWellFormed("join-large", m, List.of("balanced_after_s", "failed", "messages"));
    assertThat(m.get("balanced after s")).isNotNegative();
    assertThat(m.get("messages")).isPositive().isGreaterThanOrEqualTo(m.get("failed"));
  }

  @Test
  void scaleOutShapeReportsEachPodCountAndItsRatioToOne() throws Exception {
    Map<String, Double> m = new ScaleOut(SHORT, 100, 3, "256m").run();
    assertWellFormed("scale-out", m, List.of(
        "ask64_1_pod_msg/s", "ask256_1_pod_msg/s", "tell_1_pod_msg/s",
        "ask64_2_pods_msg/s", "ask64_2/1", "ask256_2_pods_msg/s", "ask256_2/1", "tell_2_pods_msg/s", "tell_2/1",
        "ask64_3_pods_msg/s", "ask64_3/1", "ask256_3_pods_msg/s", "ask256_3/1", "tell_3_pods_msg/s", "tell_3/1",
        "failed"));
    assertThat(m.get("ask64 1 pod msg/s")).isPositive();
    assertThat(m.get("tell 3/1")).isEqualTo(m.get("tell 3 pods msg/s") / m.get("tell 1 pod msg/s"));
    assertThat(m.get("failed")).isZero();
  }

  /** The result lines of {@code m} parse back to {@code keys}, in order, each a finite number >= 0. */
  private static void assertWellFormed(String scenario, Map<String, Double> m, List<String> keys) {
    List<Results.Line> lines = Results.lines(scenario, m).stream().map(l -> Results.parse(l).orElseThrow()).toList();
    assertThat(lines).extracting(Results.Line::key).containsExactlyElementsOf(keys);
    assertThat(lines).allSatisfy(l -> {
      assertThat(l.scenario()).isEqualTo(scenario);
      assertThat(l.value()).isFinite().isNotNegative();
    });
  }
}
