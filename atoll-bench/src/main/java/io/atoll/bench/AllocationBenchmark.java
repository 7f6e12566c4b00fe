package io.atoll.bench;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One round of {@link AllocationStrategy#decide} for 1000 shards and 100 pods, with
 * {@link RebalanceLimits#DEFAULT}: 90 pods hold every shard and 10 have just joined empty (see
 * {@link Configs#unbalancedShards}). Each invocation gets a new {@link Random} with the same seed,
 * so every invocation decides the same round. Target: at most 5 ms/op.
 *
 * <p>Public because JMH requires it; not API.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
@State(Scope.Benchmark)
public class AllocationBenchmark {

  private static final long SEED = 42;

  /** The strategy: {@code versionAware} or {@code leastShard}. */
  @Param({"versionAware", "leastShard"})
  public String strategy;

  private AllocationStrategy allocation;
  private ClusterConfig config;
  private List<Pod> pods;

  /** Builds the config and checks that the round moves shards. */
  @Setup
  public void setUp() {
    allocation = switch (strategy) {
      case "versionAware" -> AllocationStrategy.versionAware();
      case "leastShard" -> AllocationStrategy.leastShard();
      default -> throw new IllegalArgumentException("strategy: " + strategy + " (expected: versionAware or leastShard)");
    };
    config = Configs.unbalancedShards(1000, 100, 90, SEED);
    pods = config.activePods();
    List<Move> moves = decide();
    if (moves.isEmpty()) {
      throw new IllegalStateException("allocation round: no moves (expected: shards moved to the new pods)");
    }
  }

  /** Decides one round. */
  @Benchmark
  public List<Move> decide() {
    return allocation.decide(config, pods, RebalanceLimits.DEFAULT, new Random(SEED));
  }
}
