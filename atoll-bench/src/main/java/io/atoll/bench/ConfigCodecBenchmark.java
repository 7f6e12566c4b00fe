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
 * {@link ClusterConfig#encode()} and {@link ClusterConfig#decode(byte[])} of a config, as gossip
 * and the stores do on every exchange. Layouts of 16384 slots: {@code ranges}, slots in a few
 * contiguous ranges (a handful of runs, the usual shape), and {@code fragmented}, the merge of the
 * two views of {@link ConfigMergeBenchmark}, where every third slot differs from its neighbours
 * (about 11,000 runs, close to the worst case). The shard-space layouts
 * ({@link Configs#SPACE_LAYOUTS}) encode the local view of {@link Configs#spacedViews(String)}: ten
 * pods, every shard owned as the manager places it. The setup prints the encoded size once. No target of its own; reported beside the merge,
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
  @Param({"ranges", "fragmented", "one-space-10000", "ten-spaces-1000", "one-space-16384", "kv-16384"})
  public String layout;

  private ClusterConfig config;
  private byte[] bytes;

  /** Builds the config and its encoding; checks that they round-trip. */
  @Setup
  public void setUp() {
    config = switch (layout) {
      case "ranges" -> Configs.divergentSlotViews()[0];
      case "fragmented" -> {
        ClusterConfig[] views = Configs.divergentSlotViews();
        yield views[0].merge(views[1]);
      }
      default -> Configs.spacedViews(layout)[0];
    };
    bytes = config.encode();
    System.out.printf("%n[%s] spaces %d, shards %d, pods %d; encoded bytes %,d%n",
        layout, config.spaces().list().size(), config.size(), config.pods().size(), bytes.length);
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
