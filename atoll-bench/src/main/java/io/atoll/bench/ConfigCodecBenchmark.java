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
 * {@link ClusterConfig#encode()} and {@link ClusterConfig#decode(byte[])} of a 16384-slot config,
 * as gossip and the stores do on every exchange. Two layouts: {@code ranges}, slots in a few
 * contiguous ranges (a handful of runs, the usual shape), and {@code fragmented}, the merge of the
 * two views of {@link ConfigMergeBenchmark}, where every third slot differs from its neighbours
 * (about 11,000 runs, close to the worst case). No target of its own; reported beside the merge,
 * whose 50 us/op budget it shares on the gossip path.
 *
 * <p>Public because JMH requires it; not API.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
@State(Scope.Benchmark)
public class ConfigCodecBenchmark {

  /** The slot layout of the config. */
  @Param({"ranges", "fragmented"})
  public String layout;

  private ClusterConfig config;
  private byte[] bytes;

  /** Builds the config and its encoding; checks that they round-trip. */
  @Setup
  public void setUp() {
    ClusterConfig[] views = Configs.divergentSlotViews();
    config = switch (layout) {
      case "ranges" -> views[0];
      case "fragmented" -> views[0].merge(views[1]);
      default -> throw new IllegalArgumentException("layout: " + layout + " (expected: ranges or fragmented)");
    };
    bytes = config.encode();
    if (!ClusterConfig.decode(bytes).equals(config)) {
      throw new IllegalStateException("codec: decode(encode(c)) differs from c (expected: equal)");
    }
  }

  /** Encodes the config. */
  @Benchmark
  public byte[] encode() {
    return config.encode();
  }

  /** Decodes the config's bytes. */
  @Benchmark
  public ClusterConfig decode() {
    return ClusterConfig.decode(bytes);
  }
}
