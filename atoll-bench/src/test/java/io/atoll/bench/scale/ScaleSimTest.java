package io.atoll.bench.scale;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.allocation.RebalanceLimits;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The scale simulator's three scenarios at a small size (40 pods, 4,096 shards, 4 killed, 8
 * joining): the real manager reaches each goal and every figure is there. Speed is not checked:
 * figures are for docs/benchmarks.md, never for tests.
 */
class ScaleSimTest {

  @Test
  void fortyPodsStartLoseATenthAndGainEightWithEveryFigureReported() throws Exception {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    Map<String, Map<String, Double>> r = new ScaleSim(new ScaleSim.Options(40, 4096, 8, Duration.ofSeconds(3),
        new RebalanceLimits(4096, 0.1), Duration.ofMinutes(2)), new PrintStream(text, true, StandardCharsets.UTF_8))
        .run();
    System.out.print(text.toString(StandardCharsets.UTF_8));
    assertThat(r).containsOnlyKeys("cold-start", "kill-10pct", "join");
    for (Map<String, Double> f : r.values()) {
      assertThat(f).containsKeys("balanced_s", "every_pod_holds_it_s", "rounds", "moved", "saves", "config_bytes",
          "reach_every_pod_p50_ms", "bytes_per_pod_per_change", "largest_round_loop_cpu_ms");
      assertThat(f.get("config_bytes")).isPositive();
      assertThat(f.get("saves")).isPositive();
      assertThat(f.get("bytes_per_pod_per_change")).isPositive();
    }
    assertThat(r.get("kill-10pct").get("served_again_s")).as("a dead pod's shards move once its lease and margin"
        + " ran out").isGreaterThanOrEqualTo(3.0);
    assertThat(r.get("cold-start").get("moved")).isPositive();
    assertThat(r.get("join").get("moved")).as("the joiners took shards").isPositive();
    assertThat(r.get("join").get("declared_dead")).as("no live pod lost its lease").isZero();
  }
}
