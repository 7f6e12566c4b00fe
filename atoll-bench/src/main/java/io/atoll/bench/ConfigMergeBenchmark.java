package io.atoll.bench;

import io.atoll.core.ClusterConfig;
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
 * Gossip's core step: {@link ClusterConfig#merge} of two configs. {@link #merge()} merges two
 * views that differ in some shards and in their pod tables, so the result is a new config;
 * {@link #mergeIdempotent()} merges a config with an equal copy (distinct arrays), the common case
 * of repeated gossip, which returns the first input. Target: at most 50 us/op for 16384 slots.
 *
 * <p>Layouts: {@code slots-16384}, two 16384-slot views that differ in a third of the slots (see
 * {@link Configs#divergentSlotViews()}); the others are shard-space layouts of
 * {@link Configs#spacedViews(String)} (ten pods, every shard owned, an eleventh pod joining), to
 * set many spaces beside one default space of the same total shard count. The setup prints each
 * layout's encoded sizes once.
 *
 * <p>Public because JMH requires it; not API.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
@State(Scope.Benchmark)
public class ConfigMergeBenchmark {

  /** The configs' layout: {@code slots-16384} or one of {@link Configs#SPACE_LAYOUTS}. */
  @Param({"slots-16384", "one-space-10000", "ten-spaces-1000", "one-space-16384", "kv-16384"})
  public String layout;

  private ClusterConfig local;
  private ClusterConfig gossiped;
  private ClusterConfig localCopy;

  /** Builds the configs and checks that each benchmark does the work it claims to. */
  @Setup
  public void setUp() {
    ClusterConfig[] views = layout.equals("slots-16384") ? Configs.divergentSlotViews() : Configs.spacedViews(layout);
    local = views[0];
    gossiped = views[1];
    localCopy = ClusterConfig.decode(local.encode());
    ClusterConfig merged = local.merge(gossiped);
    System.out.printf("%n[%s] spaces %d, shards %d, pods %d/%d; encoded bytes: local %,d, gossiped %,d, merged %,d%n",
        layout, local.spaces().list().size(), local.size(), local.pods().size(), gossiped.pods().size(),
        local.encode().length, gossiped.encode().length, merged.encode().length);
    if (merged == local || merged == gossiped || !merged.equals(gossiped.merge(local))) {
      throw new IllegalStateException("merge: returned an input or is not commutative (expected: a new config)");
    }
    if (localCopy == local || local.merge(localCopy) != local) {
      throw new IllegalStateException("merge with an equal copy: a new config (expected: the first input)");
    }
  }

  /** Merges two divergent views into a new config. */
  @Benchmark
  public ClusterConfig merge() {
    return local.merge(gossiped);
  }

  /** Merges a config with an equal copy; the result is the first input. */
  @Benchmark
  public ClusterConfig mergeIdempotent() {
    return local.merge(localCopy);
  }
}
