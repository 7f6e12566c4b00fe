package io.atoll.bench.durable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The durable join bench end to end at a tiny size, on a real redis-server: its line is well
 * formed, and the moved counters asked read the store only when the carried states are hidden.
 * Speed is not checked: figures are for docs/benchmarks.md, never for tests.
 */
class DurableJoinBenchTest {

  private static final Pattern LINE = Pattern.compile("durable-join (carried|read) entities=2000 moved_sampled=(\\d+)"
      + " balanced_s=[0-9.]+ store_reads=(\\d+) first_msg_p50_us=\\d+ first_msg_p99_us=\\d+");

  @Test
  void movedCountersReadTheStoreOnlyWithoutTheCarriedStates() throws Exception {
    boolean installed = java.util.Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
        .anyMatch(d -> java.nio.file.Files.isExecutable(java.nio.file.Path.of(d, "redis-server")));
    if (!"true".equalsIgnoreCase(System.getenv("CI"))) {
      org.junit.jupiter.api.Assumptions.assumeTrue(installed,
          "redis-server is not installed (apt-get install -y redis-server; .ci/run does)");
    }
    Matcher carried = LINE.matcher(DurableJoinBench.run(2000, 200, true));
    Matcher read = LINE.matcher(DurableJoinBench.run(2000, 200, false));
    assertThat(carried.matches()).as(carried.toString()).isTrue();
    assertThat(read.matches()).as(read.toString()).isTrue();
    assertThat(Integer.parseInt(carried.group(2))).isPositive();
    assertThat(carried.group(3)).isEqualTo("0");
    assertThat(read.group(3)).isEqualTo(read.group(2));
  }
}
